"""The ASGI application: the webhooks of ``webhook.webhooks`` plus health, readiness and metrics,
behind the request limits. It takes everything it serves from its arguments, so that tests and
benchmarks build apps around any store.

A POST to a webhook's path goes straight to its endpoint, past FastAPI's router (DECISIONS.md §2.3
has what that saves), which serves everything else. An endpoint reads the body, decides, counts,
logs and answers with no typed-body parsing or response classes, and writes each decision as one
line, built only when written: denials, errors and rejected requests at INFO, allowed and patched
ones at DEBUG (DECISIONS.md §2.2).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.types import ASGIApp, Receive, Scope, Send

from webhook import __version__, logs
from webhook.server.limits import JSON, BodyRefused, Budget, Connections, Lifecycle, RequestLimits
from webhook.server.metrics import UNKNOWN, ServerMetrics
from webhook.settings import ServeSettings
from webhook.stores import ObjectStore
from webhook.webhooks import WEBHOOKS, Answer, Respond

# The loggers' names are those operations.md and metrics.md give.
log = logging.getLogger("webhook.server.endpoint")
decisions = logging.getLogger("webhook.server.decisions")

QUIET = frozenset({"allowed", "patched"})
"""Decisions logged at DEBUG: a busy cluster admits thousands of pods a minute."""


class Webhooks:
    """POSTs to the webhooks' paths to their endpoints, every other request to ``routes``."""

    def __init__(self, endpoints: dict[str, WebhookEndpoint], routes: ASGIApp) -> None:
        self.endpoints = endpoints
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self.endpoints.get(scope["path"]) if scope["method"] == "POST" else None
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
    """The webhooks and probes, and ``/metrics`` unless ``--metrics-port`` serves it apart.
    ``readiness`` says why the server may not be called yet (the certificate controller's), None
    when it may; ``connections`` are the guards of the server serving it (none in-process)."""
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
        if lifecycle.accept_error is not None:
            return JSONResponse({"status": lifecycle.accept_error}, status_code=503)
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


class ClientGone(Exception):
    pass


class WebhookEndpoint:
    def __init__(self, name: str, respond: Respond, metrics: ServerMetrics) -> None:
        self.name = name
        self.respond = respond
        self.metrics = metrics
        self.in_flight = metrics.in_flight
        self.in_flight[name] = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        self.in_flight[self.name] += 1
        try:
            body = await read_body(receive)
        except ClientGone:
            return
        except BodyRefused as refused:
            decision, extra = Answer(refused.status, {"error": refused.message}), refused.headers
        else:
            decision, extra = await self.respond(body), []
            del body  # let go before the answer is made
        finally:
            self.in_flight[self.name] -= 1
        self.record(decision, time.perf_counter() - started)
        content = decision.content()
        headers = [JSON, (b"content-length", str(len(content)).encode()), *extra]
        await send({"type": "http.response.start", "status": decision.status, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    def record(self, decision: Answer, seconds: float) -> None:
        if decision.error is not None:
            log.error(
                "internal error in webhook %s (request uid %r)",
                self.name,
                decision.uid,
                exc_info=decision.error,
                extra={"uid": decision.uid, "webhook": self.name},
            )
        self.metrics.observe(self.name, decision, seconds)
        level = logging.DEBUG if decision.outcome in QUIET else logging.INFO
        if decisions.isEnabledFor(level):
            entry = fields(self.name, decision, seconds)
            decisions.log(level, *text(entry), extra=entry)


async def read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def fields(webhook: str, decision: Answer, seconds: float) -> dict[str, Any]:
    """The decision line's fields: top-level keys in ``--log-format json``. Its code is the one the
    caller sees: ``response.status.code``, or the HTTP status of a rejected request."""
    if decision.status == 200:
        status = decision.body["response"]["status"]  # as ``AdmissionResponse.body`` makes it
        code, detail = status["code"], status.get("message", "")
    else:
        code, detail = decision.status, decision.body["error"]
    found: dict[str, Any] = {
        "uid": decision.uid,
        "webhook": webhook,
        "operation": decision.operation or UNKNOWN,
        "object": decision.name,
        "decision": decision.outcome,
        "code": code,
        "duration_ms": round(seconds * 1000, 3),
    }
    if decision.outcome == "patched":
        detail = decision.note
    if detail and decision.outcome != "allowed":
        found["detail"] = detail
    return found


def text(entry: dict[str, Any]) -> tuple[Any, ...]:
    """The template and arguments of ``mutate-pod CREATE team-a/rs-test-0-worker-a-: denied, code
    403, 0.41 ms, uid 7f0b...: <detail>``: the request's values as arguments, which text logs cut
    and escape (``webhook.logs``)."""
    subject = [part for part in (entry["webhook"], entry["operation"], entry["object"]) if part]
    template = " ".join(["%s"] * len(subject)) + ": %s, code %d, %.2f ms"
    args: list[Any] = [*subject, entry["decision"], entry["code"], entry["duration_ms"]]
    if entry["uid"]:
        template += ", uid %s"
        args.append(entry["uid"])
    if "detail" in entry:
        template += ": %s"
        args.append(logs.Message(entry["detail"]))
    return (template, *args)
