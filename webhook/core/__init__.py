"""The pure core: every decision, as plain functions on typed models, importing no web framework,
server or Kubernetes client. Its layers import only downwards (import-linter, pyproject.toml): the
webhooks (``pcs``, ``pod``); ``admission`` and ``sharing``; ``model``; ``gocompat``."""
