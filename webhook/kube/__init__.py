"""The Kubernetes side: resources, the access each component needs, clients, informers."""
