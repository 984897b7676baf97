"""grove-sharing-webhook: Grove's hierarchical DRA resource sharing as a standalone service."""

__version__ = "0.1.0"
