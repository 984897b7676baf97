"""The validating webhook's latency with the Grove end-to-end workload, and what the route costs.

Compares, with one fixed decision so that only the HTTP/ASGI stack differs, the production app
(in-process, webhook POSTs dispatched to the ASGI endpoint before FastAPI's middleware stack; over
TLS, answered by the connection itself, ``webhook.server.connection.exchanges``) with the same
endpoint as a route in FastAPI's router, with an ordinary FastAPI route (``request: Request`` +
``await request.body()``) and with the bare endpoint (no FastAPI at all, the lower bound),
in-process and over TLS with keep-alive. Run: ``python bench/routes.py [--n N]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import orjson
import yaml
from fastapi import FastAPI, Request, Response
from serving import (
    KeepAliveConnection,
    Stats,
    answered,
    heading,
    measure,
    measure_asgi,
    measure_new_connections,
    serve_tls,
)

from webhook.core.model.reader import read_podcliqueset
from webhook.core.pcs.handler import PodCliqueSetValidator
from webhook.server.app import create_app
from webhook.server.budget import Budget
from webhook.server.endpoint import WebhookEndpoint
from webhook.server.lifecycle import Lifecycle
from webhook.server.metrics import ServerMetrics
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore
from webhook.webhooks import WEBHOOKS

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT / "examples" / "objects" / "workload-resource-sharing.yaml"
VALIDATE = "/webhooks/validate-podcliqueset"


def workload_review() -> bytes:
    pcs = next(d for d in yaml.safe_load_all(WORKLOAD.read_text()) if d and d["kind"] == "PodCliqueSet")
    pcs["metadata"]["namespace"] = "default"
    return orjson.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "kind": {"group": "grove.io", "version": "v1alpha1", "kind": "PodCliqueSet"},
                "resource": {"group": "grove.io", "version": "v1alpha1", "resource": "podcliquesets"},
                "namespace": "default",
                "operation": "CREATE",
                "userInfo": {"username": "admin"},
                "object": pcs,
            },
        }
    )


def fastapi_route_app(settings: ServeSettings) -> FastAPI:
    """The alternative measured against: the webhook as an ordinary FastAPI route."""
    validate = next(w for w in WEBHOOKS if w.path == VALIDATE)
    respond = validate.responder(settings, EmbeddedStore.of([]))
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @app.post(VALIDATE)
    async def route(request: Request) -> Response:
        decision = await respond(await request.body())
        return Response(decision.content(), status_code=decision.status, media_type="application/json")

    return app


def router_route_app(settings: ServeSettings) -> FastAPI:
    """The endpoint as a plain route in FastAPI's router, behind its middleware stack."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.router.add_route(VALIDATE, bare_endpoint(settings), methods=["POST"])
    return app


def bare_endpoint(settings: ServeSettings) -> Any:
    store = EmbeddedStore.of([])
    validate = next(w for w in WEBHOOKS if w.path == VALIDATE)
    return WebhookEndpoint(
        validate.name, validate.responder(settings, store), ServerMetrics(store), settings.max_body_bytes,
        budget=Budget(settings.max_held_bytes), lifecycle=Lifecycle(),
    )


def core_only(body: bytes, n: int) -> Stats:
    validator = PodCliqueSetValidator()
    seconds = []
    started = time.perf_counter()
    for _ in range(n):
        before = time.perf_counter()
        answered(validator, "validate-podcliqueset", body)
        seconds.append(time.perf_counter() - before)
    return Stats.of(seconds, time.perf_counter() - started)


def compare_routes(settings: ServeSettings, body: bytes, n: int) -> None:
    variants = {
        "production (in-process: the ASGI endpoint before FastAPI's middleware; over TLS: answered by the connection)": lambda: create_app(settings, EmbeddedStore.of([])),
        "ASGI endpoint as a route in FastAPI's router": lambda: router_route_app(settings),
        "FastAPI route (Request.body())": lambda: fastapi_route_app(settings),
        "bare ASGI endpoint, no FastAPI": lambda: bare_endpoint(settings),
    }
    print(HEADER.format("in-process"))
    for name, build in variants.items():
        print(measure_asgi(build(), body, n).row(name))
    print("\n" + HEADER.format("over TLS, one kept-alive connection"))
    for name, build in variants.items():
        with serve_tls(build()) as endpoint, KeepAliveConnection(endpoint) as connection:
            print(measure(connection, body, n).row(name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000, help="requests per measurement")
    n = parser.parse_args().n
    settings = ServeSettings()
    body = workload_review()
    print(heading(f"body {len(body)} bytes; n={n}") + "\n")

    print("## The Grove workload, decided\n")
    print(HEADER.format("where"))
    print(core_only(body, n).row("the validating handler alone"))
    print(measure_asgi(create_app(settings, EmbeddedStore.of([])), body, n).row("the app, in-process"))
    with serve_tls(ServeSettings(objects=[WORKLOAD])) as endpoint:
        with KeepAliveConnection(endpoint) as connection:
            print(measure(connection, body, n).row("`webhook serve` over TLS, one kept-alive connection"))
        print(measure_new_connections(endpoint, body, max(n // 10, 100)).row("`webhook serve` over TLS, a new connection per request"))

    print("\n## Route overhead: the same fixed decision behind each route shape\n")
    fixed = PodCliqueSetValidator().validate(read_podcliqueset(orjson.loads(body)["request"]["object"]), None)
    PodCliqueSetValidator.validate = lambda self, pcs, old: fixed  # type: ignore[method-assign]
    compare_routes(settings, body, n)


HEADER = "| {} | median ms | p99 ms | per second |\n|---|---|---|---|"

if __name__ == "__main__":
    main()
