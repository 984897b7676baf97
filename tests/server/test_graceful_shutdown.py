"""SIGTERM: readiness fails at once, requests in flight are answered, the process exits 0."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path
from urllib.parse import urlsplit

import orjson
from server.reviews import VALIDATE, WORKLOAD, body, review, workload_pcs
from server.serverproc import Served, poll, serve


class HalfSentRequest:
    """A webhook call whose body is only half sent: in flight until ``finish``."""

    def __init__(self, served: Served, content: bytes) -> None:
        port = urlsplit(served.url).port
        context = ssl.create_default_context(cafile=served.ca)
        self.tls = context.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
        head = (
            f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(content)}\r\n\r\n"
        ).encode()
        self.rest = content[len(content) // 2 :]
        self.tls.sendall(head + content[: len(content) // 2])

    def finish(self) -> tuple[int, dict[str, object]]:
        self.tls.sendall(self.rest)
        received = b""
        while chunk := self.tls.recv(65536):
            received += chunk
        self.tls.close()
        head, _, payload = received.partition(b"\r\n\r\n")
        return int(head.split()[1]), orjson.loads(payload)


def readyz(served: Served) -> int:
    with served.client() as client:
        return client.get("/readyz").status_code


def test_sigterm_fails_readiness_lets_requests_in_flight_finish_and_exits_0(tmp_path: Path) -> None:
    with serve(tmp_path, "--objects", str(WORKLOAD), "--shutdown-delay", "0.5") as served:
        in_flight = [HalfSentRequest(served, body(review(workload_pcs(), uid=f"uid-{i}"))) for i in range(3)]
        assert readyz(served) == 200

        served.terminate()
        poll(lambda: readyz(served) == 503, "readiness to fail after SIGTERM")
        poll(lambda: "Shutting down" in served.log_text(), "the listener to close")

        answers = [request.finish() for request in in_flight]
        assert [(status, data["response"]["uid"], data["response"]["allowed"]) for status, data in answers] == [  # type: ignore[index]
            (200, f"uid-{i}", True) for i in range(3)
        ]
        assert served.exit_code() == 0
