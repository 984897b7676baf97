"""Measuring the webhook server: in-process through the ASGI app, and over real TLS with keep-alive.

Importable by the other benchmark scripts (``from serving import serve_tls, KeepAliveConnection,
measure``; run them as ``python bench/<script>.py`` so this directory is on ``sys.path``).

The TLS server runs in a forked child process with the production uvicorn configuration, so the
client's work does not share the server's GIL; the client speaks HTTP/1.1 over one raw TLS socket,
which costs far less than a full HTTP client and leaves the server's cost to be seen.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import socket
import ssl
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import uvloop

from webhook.certs import ensure
from webhook.core.admission import Answer, Handler, answer
from webhook.server.limits import Budget, Connections, Lifecycle
from webhook.server.run import Server, listen, serve, uvicorn_config
from webhook.settings import ServeSettings

VALIDATE = "/webhooks/validate-podcliqueset"


@dataclass(frozen=True, slots=True)
class Stats:
    n: int
    median_ms: float
    p99_ms: float
    per_second: float

    @classmethod
    def of(cls, seconds: list[float], total: float) -> Stats:
        ordered = sorted(seconds)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return cls(len(ordered), statistics.median(ordered) * 1000, p99 * 1000, len(ordered) / total)

    def row(self, name: str) -> str:
        return f"| {name} | {self.median_ms:.3f} | {self.p99_ms:.3f} | {self.per_second:,.0f} |"


@dataclass(frozen=True, slots=True)
class Endpoint:
    url: str
    ca: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_child(settings: ServeSettings, app: Any) -> None:
    if app is None:
        serve(settings)
        return
    connections = Connections(settings, Budget(settings.max_held_bytes), Lifecycle().dropped)
    server = Server(uvicorn_config(settings, app, connections))
    with listen(settings.host, settings.port) as sock, asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(server.serve(sockets=[sock]))


@contextmanager
def serve_tls(target: Any, *, keep_alive_timeout: float = 120.0) -> Iterator[Endpoint]:
    """Serves ``target`` over HTTPS on a free loopback port until the block ends.

    ``target`` is an ASGI app (served with the production uvicorn configuration) or a
    ``ServeSettings`` (served exactly as ``webhook serve`` would, store included); the port and
    certificate options are replaced by a free port and fresh certificates."""
    with tempfile.TemporaryDirectory() as directory:
        certs = Path(directory)
        ensure(certs, ["localhost", "127.0.0.1"])
        port = _free_port()
        base = target if isinstance(target, ServeSettings) else ServeSettings()
        settings = base.model_copy(
            update={
                "port": port,
                "tls_cert": certs / "tls.crt",
                "tls_key": certs / "tls.key",
                "keep_alive_timeout": keep_alive_timeout,
                "log_level": "warning",
            }
        )
        app = None if isinstance(target, ServeSettings) else target
        child = multiprocessing.get_context("fork").Process(target=_run_child, args=(settings, app), daemon=True)
        child.start()
        endpoint = Endpoint(f"https://127.0.0.1:{port}", certs / "ca.crt")
        try:
            _wait_serving(endpoint, child)
            yield endpoint
        finally:
            child.terminate()
            child.join(10)
            if child.is_alive():
                child.kill()


def _wait_serving(endpoint: Endpoint, child: multiprocessing.process.BaseProcess, deadline: float = 20.0) -> None:
    """Until a TLS handshake succeeds (the app may have no /healthz)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if not child.is_alive():
            raise RuntimeError(f"the server exited with {child.exitcode}")
        try:
            KeepAliveConnection(endpoint).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the server did not accept a TLS connection in time")


class KeepAliveConnection:
    """One TLS connection, verified with the endpoint's CA, carrying requests one after another."""

    def __init__(self, endpoint: Endpoint) -> None:
        parts = urlsplit(endpoint.url)
        self.host = parts.hostname or "127.0.0.1"
        context = ssl.create_default_context(cafile=endpoint.ca)
        raw = socket.create_connection((self.host, parts.port or 443))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = context.wrap_socket(raw, server_hostname=self.host)
        self.reader = self.sock.makefile("rb")

    def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        self.sock.sendall(head + body)
        status = int(self.reader.readline().split()[1])
        length = 0
        while (line := self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, self.reader.read(length)

    def close(self) -> None:
        self.reader.close()
        self.sock.close()

    def __enter__(self) -> KeepAliveConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def answered(handler: Handler, webhook: str, body: bytes) -> Answer:
    """The handler's answer to ``body`` in-process, without an event loop: no handler waits on
    anything when its PodCliqueSet is in the store, so the coroutine finishes on its first step."""
    coroutine = answer(handler, webhook, body)
    try:
        coroutine.send(None)
    except StopIteration as done:
        result: Answer = done.value
        return result
    coroutine.close()
    raise RuntimeError("the handler waited for something: not an in-process measurement")


def timed(call: Callable[[], Any], n: int, warmup: int = 200) -> Stats:
    """An in-process call timed ``n`` times after ``warmup`` untimed ones."""
    for _ in range(warmup):
        call()
    seconds = []
    started = time.perf_counter()
    for _ in range(n):
        before = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - before)
    return Stats.of(seconds, time.perf_counter() - started)


def measure(connection: KeepAliveConnection, body: bytes, n: int, path: str = VALIDATE, warmup: int = 200) -> Stats:
    """Latency of ``n`` POSTs of ``body`` one after another on one kept-alive connection."""
    for _ in range(warmup):
        connection.request("POST", path, body)
    seconds = []
    started = time.perf_counter()
    for _ in range(n):
        before = time.perf_counter()
        status, _ = connection.request("POST", path, body)
        seconds.append(time.perf_counter() - before)
        if status != 200:
            raise RuntimeError(f"{path} answered {status}")
    return Stats.of(seconds, time.perf_counter() - started)


def measure_new_connections(endpoint: Endpoint, body: bytes, n: int, path: str = VALIDATE) -> Stats:
    """Latency of a POST on a fresh connection each time (TCP and a full TLS handshake included)."""
    seconds = []
    started = time.perf_counter()
    for _ in range(n):
        before = time.perf_counter()
        with KeepAliveConnection(endpoint) as connection:
            connection.request("POST", path, body)
        seconds.append(time.perf_counter() - before)
    return Stats.of(seconds, time.perf_counter() - started)


def measure_asgi(app: Any, body: bytes, n: int, path: str = VALIDATE, warmup: int = 200) -> Stats:
    """Latency of calling the ASGI app directly: routing, middleware and the endpoint, no HTTP."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "https",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"localhost"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8443),
    }

    async def once() -> int:
        delivered = False
        status = 0

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                return {"type": "http.disconnect"}
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await app(dict(scope), receive, send)
        return status

    async def run() -> Stats:
        for _ in range(warmup):
            await once()
        seconds = []
        started = time.perf_counter()
        for _ in range(n):
            before = time.perf_counter()
            status = await once()
            seconds.append(time.perf_counter() - before)
            if status != 200:
                raise RuntimeError(f"{path} answered {status}")
        return Stats.of(seconds, time.perf_counter() - started)

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(run())


def heading(detail: str = "") -> str:
    """The first line a benchmark prints: the machine, the day, the commit and ``detail``."""
    root = Path(__file__).resolve().parents[1]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root).stdout.strip()
    return f"{machine()}; {time.strftime('%Y-%m-%d')}; commit {commit}" + (f"; {detail}" if detail else "")


def machine() -> str:
    """What the figures were measured on, for docs/PERFORMANCE.md."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs"
