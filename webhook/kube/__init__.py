"""The Kubernetes side: resources we read and write, the access each component needs, client
configuration and the list+watch informer shared by the cluster store and the claim reconciler."""
