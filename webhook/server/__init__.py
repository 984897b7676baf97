"""The HTTPS shell around the core: the ASGI app, its limits and metrics, and ``webhook serve``."""
