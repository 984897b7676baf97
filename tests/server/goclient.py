"""A client that reuses connections as Go's ``http.Transport`` does, the way the API server calls a
webhook: a kept-alive connection is reused unless its last response said ``Connection: close``, and
only if the server has not closed it meanwhile (Go reads every idle connection all the time, so it
sees a close at once; here a look at the socket before each request stands in for that). A POST
whose request was written and then got no answer is lost: Go does not retry it."""

from __future__ import annotations

import select
import socket
import ssl
import time
from dataclasses import dataclass, field
from pathlib import Path


class NotSent(Exception):
    """No connection could be made (the listener is closed): a caller would try another replica."""


class Lost(Exception):
    """The request was written and the connection ended before its answer."""


@dataclass
class Answer:
    status: int
    closes: bool
    """The response said ``Connection: close``."""
    body: bytes
    sent_at: float


@dataclass
class GoLikeClient:
    port: int
    ca: Path
    timeout: float = 10.0
    connection: ssl.SSLSocket | None = None
    connections_made: int = 0
    context: ssl.SSLContext = field(init=False)

    def __post_init__(self) -> None:
        self.context = ssl.create_default_context(cafile=self.ca)

    def _usable(self, connection: ssl.SSLSocket) -> bool:
        """An idle connection with nothing to read: anything there (a TLS close_notify, the end of
        the stream, a reset) means the server has closed it."""
        if connection.pending():
            return False
        readable, _, _ = select.select([connection], [], [], 0)
        return not readable

    def _connect(self) -> ssl.SSLSocket:
        try:
            raw = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)
        except OSError as err:
            raise NotSent(str(err)) from None
        try:
            connection = self.context.wrap_socket(raw, server_hostname="localhost")
        except OSError as err:
            raw.close()
            raise NotSent(str(err)) from None
        self.connections_made += 1
        return connection

    def post(self, path: str, body: bytes) -> Answer:
        connection = self.connection
        if connection is None or not self._usable(connection):
            self.close()
            connection = self.connection = self._connect()
        head = f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        sent_at = time.monotonic()
        try:
            connection.sendall(head.encode() + body)
        except OSError as err:
            self.close()
            raise Lost(f"writing the request failed: {err}") from None
        try:
            answer = self._read(connection, sent_at)
        except OSError as err:
            self.close()
            raise Lost(f"no answer: {err}") from None
        if answer.closes:
            self.close()
        return answer

    def _read(self, connection: ssl.SSLSocket, sent_at: float) -> Answer:
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = connection.recv(65536)
            if not chunk:
                raise ConnectionError("the connection ended before the response head")
            received += chunk
        head, _, rest = received.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = connection.recv(65536)
            if not chunk:
                raise ConnectionError("the connection ended before the response body")
            rest += chunk
        closes = "close" in headers.get("connection", "").lower()
        return Answer(int(status_line.split()[1]), closes, rest[:length], sent_at)

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None
