"""The ASGI application: the webhooks of ``webhook.webhooks`` plus health, readiness and metrics.

``create_app`` takes everything it serves from its arguments (no module state), so tests and
benchmarks build apps around any store. Every request passes the request limits first
(``webhook.server.limits``). The probes and ``/metrics`` are FastAPI routes; a POST to a webhook's
path goes straight to its endpoint (``webhook.server.endpoint``), which answers every error
itself, rather than through FastAPI's middleware and router (DECISIONS.md §2.3 has what that
saves); another method on a webhook path goes through the router, which answers 405.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.types import ASGIApp, Receive, Scope, Send

from webhook import __version__
from webhook.server.budget import Budget
from webhook.server.endpoint import WebhookEndpoint
from webhook.server.guard import Connections
from webhook.server.lifecycle import Lifecycle
from webhook.server.limits import RequestLimits
from webhook.server.metrics import ServerMetrics
from webhook.settings import ServeSettings
from webhook.stores.base import ObjectStore
from webhook.webhooks import WEBHOOKS


class Webhooks:
    """POSTs to the webhooks' paths to their endpoints, every other request to ``routes``."""

    def __init__(self, endpoints: dict[str, WebhookEndpoint], routes: ASGIApp) -> None:
        self.endpoints = endpoints
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self.endpoints.get(scope["path"]) if scope["type"] == "http" and scope["method"] == "POST" else None
        await (endpoint or self.routes)(scope, receive, send)


def create_app(
    settings: ServeSettings,
    store: ObjectStore,
    *,
    metrics: ServerMetrics | None = None,
    lifecycle: Lifecycle | None = None,
    budget: Budget | None = None,
    readiness: Callable[[], str | None] | None = None,
    connections: Connections | None = None,
) -> ASGIApp:
    """The webhooks and probes; ``/metrics`` too unless ``--metrics-port`` gives it a listener of its
    own (``create_metrics_app``). ``readiness`` says why the server may not be called yet (the
    certificate controller's), None when it may; ``connections`` are the guards of the server
    serving it (none in-process)."""
    lifecycle = lifecycle or Lifecycle()
    budget = budget or Budget(settings.max_held_bytes)
    metrics = metrics or ServerMetrics(store, lifecycle, budget)
    routes = _fastapi("grove-sharing-webhook")
    endpoints = {}
    for webhook in WEBHOOKS:
        endpoint = endpoints[webhook.path] = WebhookEndpoint(webhook.name, webhook.responder(settings, store), metrics)
        # Starlette's Route serves any ASGI app; add_route's annotation names only request handlers.
        routes.router.add_route(webhook.path, endpoint, methods=["POST"], include_in_schema=False)  # type: ignore[arg-type]

    @routes.get("/healthz")
    async def healthz() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @routes.get("/readyz")
    async def readyz() -> JSONResponse:
        if lifecycle.draining:
            return JSONResponse({"status": "shutting down"}, status_code=503)
        if not store.ready:
            return JSONResponse({"status": "object store not synced"}, status_code=503)
        why = readiness() if readiness is not None else None
        if why is not None:
            return JSONResponse({"status": why}, status_code=503)
        return JSONResponse({"status": "ready"})

    if not settings.metrics_port:
        _add_metrics(routes, metrics)
    return RequestLimits(Webhooks(endpoints, routes), settings, budget, lifecycle, connections)


def create_metrics_app(
    settings: ServeSettings, metrics: ServerMetrics, lifecycle: Lifecycle, budget: Budget, connections: Connections | None = None
) -> ASGIApp:
    """``/metrics`` alone, for the listener of ``--metrics-port``, under the same limits."""
    routes = _fastapi("grove-sharing-webhook metrics")
    _add_metrics(routes, metrics)
    return RequestLimits(routes, settings, budget, lifecycle, connections)


def _fastapi(title: str) -> FastAPI:
    return FastAPI(title=title, version=__version__, docs_url=None, redoc_url=None, openapi_url=None)


def _add_metrics(app: FastAPI, metrics: ServerMetrics) -> None:
    @app.get("/metrics")
    async def prometheus() -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
