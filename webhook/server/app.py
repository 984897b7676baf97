"""The ASGI application: the webhooks of ``webhook.webhooks`` plus health, readiness and metrics.

``create_app`` takes everything it serves from its arguments (no module state), so tests and
benchmarks build apps around any store. The probes and ``/metrics`` are ordinary FastAPI routes.
Each webhook is a plain ASGI endpoint (``webhook.server.endpoint``) that a POST to its path reaches
before FastAPI's middleware stack and router: that stack costs more per call than deciding a
typical review in-process (docs/PERFORMANCE.md), and the endpoint answers every error itself.
Other methods on a webhook path go through the router, which answers 405.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.types import Receive, Scope, Send

from webhook import __version__
from webhook.server.budget import Budget
from webhook.server.endpoint import WebhookEndpoint
from webhook.server.lifecycle import Lifecycle
from webhook.server.metrics import ServerMetrics
from webhook.settings import ServeSettings
from webhook.stores.base import ObjectStore
from webhook.webhooks import WEBHOOKS


class AdmissionApp(FastAPI):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.webhook_endpoints: dict[str, WebhookEndpoint] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            endpoint = self.webhook_endpoints.get(scope["path"])
            if endpoint is not None:
                await endpoint(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def create_app(
    settings: ServeSettings,
    store: ObjectStore,
    *,
    metrics: ServerMetrics | None = None,
    lifecycle: Lifecycle | None = None,
    budget: Budget | None = None,
    readiness: Callable[[], str | None] | None = None,
) -> AdmissionApp:
    """The webhooks and probes; ``/metrics`` too unless ``--metrics-port`` gives it a listener of its
    own (``create_metrics_app``). ``readiness`` says why the server may not be called yet (the
    certificate controller's), None when it may."""
    lifecycle = lifecycle or Lifecycle()
    budget = budget or Budget(settings.max_held_bytes)
    metrics = metrics or ServerMetrics(store, lifecycle, budget)
    app = AdmissionApp(
        title="grove-sharing-webhook",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )

    for webhook in WEBHOOKS:
        endpoint = WebhookEndpoint(
            webhook.name, webhook.responder(settings, store), metrics, settings.max_body_bytes, settings.body_timeout,
            budget=budget, lifecycle=lifecycle,
        )
        app.webhook_endpoints[webhook.path] = endpoint
        # Starlette's Route serves any ASGI app; add_route's annotation names only request handlers.
        app.router.add_route(webhook.path, endpoint, methods=["POST"], include_in_schema=False)  # type: ignore[arg-type]

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @app.get("/readyz")
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
        _add_metrics(app, metrics)
    return app


def create_metrics_app(metrics: ServerMetrics) -> FastAPI:
    """``/metrics`` alone, for the listener of ``--metrics-port``."""
    app = FastAPI(title="grove-sharing-webhook metrics", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    _add_metrics(app, metrics)
    return app


def _add_metrics(app: FastAPI, metrics: ServerMetrics) -> None:
    @app.get("/metrics")
    async def prometheus() -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
