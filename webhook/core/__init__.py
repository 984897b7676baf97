"""The pure core: every decision, as plain functions on typed models.

Nothing here imports a web framework, a server or the Kubernetes client; the shells around it do.
Its sub-packages import only downwards (checked by import-linter, see pyproject.toml):

- ``pcs`` and ``pod``: the two webhooks' handlers and rules;
- ``admission`` (the AdmissionReview seam) and ``sharing`` (who shares which claims);
- ``model``: the objects as read;
- ``gocompat``: Go's decoding, comparison and printing.
"""
