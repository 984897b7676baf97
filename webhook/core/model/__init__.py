"""The objects as this project reads them: Grove's PodCliqueSet (one representation, read from its
JSON, with the schema whose messages refuse an unusual one) and its children, pods, object metadata
and Grove's labels."""
