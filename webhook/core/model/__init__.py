"""The objects as this project reads them: Grove's PodCliqueSet and its children, pods, object
metadata and Grove's labels."""
