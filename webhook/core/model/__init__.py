"""The objects as this project reads them: Grove's PodCliqueSet and its children, pods, object
metadata, Grove's labels, and the compact projection of a PodCliqueSet the stores keep."""
