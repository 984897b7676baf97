"""The mutating webhook for Pods: it places a Grove pod and patches in its shared claims."""
