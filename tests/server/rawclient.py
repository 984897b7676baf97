"""A TLS connection to the served webhook written to by hand, for requests no HTTP client sends: a
body that stops, trickles in byte by byte, or is announced larger than it ever gets."""

from __future__ import annotations

import socket
import ssl
import time
from urllib.parse import urlsplit

import orjson
from server.serverproc import Served


class RawRequest:
    def __init__(self, served: Served, path: str, headers: dict[str, str]) -> None:
        context = ssl.create_default_context(cafile=served.ca)
        raw = socket.create_connection(("127.0.0.1", urlsplit(served.url).port))
        self.tls = context.wrap_socket(raw, server_hostname="localhost")
        head = "".join(f"{name}: {value}\r\n" for name, value in {"Host": "localhost", **headers}.items())
        self.tls.sendall(f"POST {path} HTTP/1.1\r\n{head}\r\n".encode())

    def send(self, data: bytes) -> None:
        self.tls.sendall(data)

    def response(self, deadline: float) -> tuple[int, dict[str, str], object, float]:
        """Status, headers, JSON body and the seconds waited, reading until the server closes the
        connection (it must: every answer here ends with ``connection: close``)."""
        started = time.monotonic()
        self.tls.settimeout(deadline)
        received = b""
        while chunk := self.tls.recv(65536):
            received += chunk
        waited = time.monotonic() - started
        self.tls.close()
        head, _, payload = received.partition(b"\r\n\r\n")
        status_line, *lines = head.decode().split("\r\n")
        headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
        return int(status_line.split()[1]), headers, orjson.loads(payload), waited

    def close(self) -> None:
        self.tls.close()

HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"


def port_of(served: Served) -> int:
    return int(served.url.rsplit(":", 1)[1])


def keep_alive(served: Served) -> ssl.SSLSocket:
    """A TLS connection that has made one request, as an API server keeps them."""
    context = ssl.create_default_context(cafile=served.ca)
    tls = context.wrap_socket(socket.create_connection(("127.0.0.1", port_of(served))), server_hostname="localhost")
    assert status(tls, HEALTHZ) == 200
    return tls


def status(tls: ssl.SSLSocket, request: bytes, deadline: float = 10.0) -> int:
    return answer(tls, request, deadline)[0]


def answer(tls: ssl.SSLSocket, request: bytes, deadline: float = 10.0) -> tuple[int, bytes]:
    """The status and body of the answer to ``request``."""
    tls.settimeout(deadline)
    tls.sendall(request)
    received = b""
    while b"\r\n\r\n" not in received:
        received += tls.recv(65536)
    head, _, rest = received.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    while len(rest) < length:
        rest += tls.recv(65536)
    return int(head.split()[1]), rest


def post(path: str, content: bytes) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(content)}\r\n\r\n").encode() + content
