"""The serving certificate kept by the webhook server itself (``serve --cert-secret``), and the
making of certificates it shares with ``webhook certs``."""
