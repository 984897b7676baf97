"""``/healthz``, ``/readyz`` and ``/metrics`` over plain HTTP on a port of their own: a standard
library server in a thread, as probes and scrapes are a few requests a minute."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

log = logging.getLogger(__name__)

Readiness = Callable[[], str | None]
"""None when ready, else why not (one line, shown in the 503 body)."""


class HealthServer:
    def __init__(self, host: str, port: int, readiness: Readiness, registry: CollectorRegistry) -> None:
        self._server = ThreadingHTTPServer((host, port), _handler(readiness, registry))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="health", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(readiness: Readiness, registry: CollectorRegistry) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server protocol
            path = self.path.split("?", 1)[0]
            if path == "/healthz":
                self._send(200, b"ok\n")
            elif path == "/readyz":
                why = readiness()
                self._send(200, b"ok\n") if why is None else self._send(503, f"not ready: {why}\n".encode())
            elif path == "/metrics":
                self._send(200, generate_latest(registry), CONTENT_TYPE_LATEST)
            else:
                self._send(404, b"not found\n")

        def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the http.server signature
            log.debug("health: " + format, *args)

    return Handler
