"""The HTTPS shell around the core: the ASGI app, its metrics, TLS and the uvicorn runner."""
