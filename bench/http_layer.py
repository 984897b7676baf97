"""What the HTTP layer costs a request in-process: the server's connection protocol fed whole
requests on one kept-alive connection, over a transport that only counts what is written, no TLS
and no sockets.

Two apps behind it: the production app (``create_app``) deciding a pod that is not Grove's (read no
further than its labels, so the HTTP work weighs most), and a bare ASGI app that answers ``{}``, so
that only the protocol is left. Then the whole request around the decision, in CPU time: 4,096
distinct Grove pods over 1,000 stored PodCliqueSets (``decisions.py``'s), each patched, with the
decision line written at ``info`` as ``webhook serve`` writes it (to a file), and with it off. The TLS benchmarks (``routes.py``, ``mutate.py``) move by tens of
microseconds from run to run on a shared machine; this one sees a microsecond. Printed: the median
of ``--runs`` medians of ``--n`` requests, in µs. Run: ``python bench/http_layer.py [--n N] [--runs R]``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
import uvloop
from decisions import STORED, pod_reviews
from mutate import podcliquesets
from serving import heading
from uvicorn.server import ServerState

from webhook import logs
from webhook.certs import ensure
from webhook.server.app import create_app
from webhook.server.budget import Budget
from webhook.server.connection.limits import Limits
from webhook.server.connection.protocol import ServerProtocol
from webhook.server.connection.turns import LoopTurn
from webhook.server.lifecycle import Lifecycle
from webhook.server.run import uvicorn_config
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from server.wire import Wire  # noqa: E402  (the suite's in-process transport)
MUTATE = "/webhooks/mutate-pod"


def pod_review() -> bytes:
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]},
    }
    request = {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"}, "namespace": "default",
        "operation": "CREATE", "userInfo": {"username": "admin"}, "object": pod,
    }
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


def as_the_api_server_sends(body: bytes) -> bytes:
    head = (
        f"POST {MUTATE} HTTP/1.1\r\nHost: grove-sharing-webhook.grove.svc:443\r\nUser-Agent: kube-apiserver-admission\r\n"
        f"Content-Type: application/json\r\nAccept: application/json, */*\r\nAccept-Encoding: gzip\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def bare(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"{}"})


def connected(settings: ServeSettings, app: Any) -> tuple[ServerProtocol, Wire]:
    config = uvicorn_config(settings, app)
    config.load()
    protocol = ServerProtocol(
        config=config, server_state=ServerState(), app_state={}, _loop=asyncio.get_running_loop(),
        lifecycle=Lifecycle(), budget=Budget(settings.max_held_bytes), limits=Limits.of(settings), turn=LoopTurn(asyncio.get_running_loop()),
        webhooks={path.encode(): endpoint for path, endpoint in getattr(app, "webhook_endpoints", {}).items()},
    )
    transport = Wire(record=False)
    protocol.connection_made(transport)
    return protocol, transport


async def answered(protocol: ServerProtocol, transport: Wire, request: bytes) -> None:
    """Hands over ``request`` and waits for its answer's write, the loop turning at least once (as
    it does for each read a server makes): what is done at a turn's end is counted too."""
    written = transport.writes
    protocol.data_received(request)
    await asyncio.sleep(0)
    while transport.writes == written:  # the head and the body go out as one write
        await asyncio.sleep(0)


async def measure(settings: ServeSettings, app: Any, request: bytes, n: int) -> float:
    """Median µs from handing the protocol a request to its answer's body being written."""
    protocol, transport = connected(settings, app)
    seconds = []
    for i in range(n + 2000):
        started = time.perf_counter()
        await answered(protocol, transport, request)
        if i >= 2000:
            seconds.append(time.perf_counter() - started)
    protocol.connection_lost(None)
    return statistics.median(seconds) * 1e6


async def cpu_per_request(settings: ServeSettings, app: Any, requests: list[bytes]) -> float:
    """CPU µs per request over one pass of ``requests`` (after one pass to warm up)."""
    protocol, transport = connected(settings, app)
    for request in requests:
        await answered(protocol, transport, request)
    began = time.process_time()
    for request in requests:
        await answered(protocol, transport, request)
    protocol.connection_lost(None)
    return (time.process_time() - began) / len(requests) * 1e6


def around_the_decision(settings: ServeSettings, runs: int, log: Path) -> None:
    """The least CPU of ``runs`` passes over distinct Grove pods with the decision lines written
    and off, the two alternated (the machine's state drifts between runs)."""
    review = next(iter(pod_reviews().values()))
    requests = [as_the_api_server_sends(review(k)) for k in range(4096)]
    app = create_app(settings, EmbeddedStore.of(podcliquesets(STORED)))
    levels = {"decision lines written (info, text, to a file)": "info", "decision lines off": "warning"}
    timings: dict[str, list[float]] = {name: [] for name in levels}
    with log.open("w") as stream:
        for _ in range(runs):
            for name, level in levels.items():
                logs.configure(level, "text")
                handler = logging.getLogger().handlers[0]
                assert isinstance(handler, logs.ProjectHandler)
                handler.setStream(stream)
                timings[name].append(uvloop.run(cpu_per_request(settings, app, requests)))
    print(f"\n| 4,096 distinct Grove pods, {STORED:,} stored, each patched | least CPU µs per request |\n|---|---|")
    for name, values in timings.items():
        print(f"| {name} | {min(values):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="requests per run")
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    print(heading(f"n={arguments.n}, median of {arguments.runs} runs") + "\n")
    with tempfile.TemporaryDirectory() as directory:
        ensure(Path(directory), ["localhost"])
        settings = ServeSettings(tls_cert=Path(directory) / "tls.crt", tls_key=Path(directory) / "tls.key")
        body = pod_review()
        apps = {
            "production app, a pod that is not Grove's": lambda: create_app(settings, EmbeddedStore.of([])),
            "bare ASGI app answering {}": lambda: bare,
        }
        print("| behind the protocol | median µs |\n|---|---|")
        for name, build in apps.items():
            runs = [uvloop.run(measure(settings, build(), as_the_api_server_sends(body), arguments.n)) for _ in range(arguments.runs)]
            print(f"| {name} | {statistics.median(runs):.2f} |")
        around_the_decision(settings, arguments.runs, Path(directory) / "decisions.log")


if __name__ == "__main__":
    main()
