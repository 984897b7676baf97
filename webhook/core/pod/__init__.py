"""The mutating webhook for Pods: the handler that places a Grove pod and the JSON Patch that gives it
its shared claims."""
