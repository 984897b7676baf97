"""Clients that try to make the served process hold memory, and its resident memory while they do:
what the tests of request heads and of the server's budget share."""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

from prometheus_client.parser import text_string_to_metric_families
from server.serverproc import Served

MiB = 1024 * 1024


def rss_bytes(served: Served) -> int:
    """The server process's resident memory now, as the kernel counts it (what a memory limit sees)."""
    with open(f"/proc/{served.process.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/<pid>/status")


@dataclass
class Peak:
    value: int = 0


@contextmanager
def peak_rss(served: Served) -> Iterator[Peak]:
    """The highest resident memory seen while the block runs, sampled every few milliseconds."""
    peak = Peak(rss_bytes(served))
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.01):
            peak.value = max(peak.value, rss_bytes(served))

    thread = threading.Thread(target=sample)
    thread.start()
    try:
        yield peak
    finally:
        stop.set()
        thread.join()
        peak.value = max(peak.value, rss_bytes(served))


def connect(served: Served, receive_buffer: int | None = None) -> ssl.SSLSocket:
    """A TLS connection; ``receive_buffer`` fixes the kernel's buffer for what the server sends, so
    that a client that does not read makes the server's answer back up at once."""
    context = ssl.create_default_context(cafile=served.ca)
    raw = socket.socket()
    if receive_buffer is not None:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    raw.settimeout(10)
    raw.connect(("127.0.0.1", urlsplit(served.url).port or 443))
    return context.wrap_socket(raw, server_hostname="localhost")


@dataclass
class Outcome:
    status: int | None
    """The status the server answered, or None when it closed (or reset) without an answer."""
    sent: int
    """Bytes written before the answer or the close was seen."""
    head: bytes = b""
    body: bytes = b""

    def header(self, name: str) -> str | None:
        for line in self.head.split(b"\r\n")[1:]:
            key, _, value = line.partition(b":")
            if key.strip().lower() == name.encode():
                return value.strip().decode()
        return None


def _answer(tls: ssl.SSLSocket, received: bytes, deadline: float) -> tuple[int | None, bytes, bytes]:
    """What the server has said (read until it closes, or ``deadline`` seconds pass)."""
    tls.settimeout(deadline)
    try:
        while chunk := tls.recv(65536):
            received += chunk
    except (OSError, ssl.SSLError):
        pass
    head, _, body = received.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 "):
        return None, b"", b""
    return int(head.split()[1]), head, body


def already_answered(tls: ssl.SSLSocket) -> bytes | None:
    """Whatever the server has already answered (b"" when it closed), or None when it has not: TLS
    records that carry no data (session tickets) make the socket readable too."""
    if not select.select([tls], [], [], 0)[0]:
        return None
    tls.setblocking(False)
    try:
        return tls.recv(65536)
    except ssl.SSLWantReadError:
        return None
    except (OSError, ssl.SSLError):
        return b""
    finally:
        tls.setblocking(True)


def write_unless_answered(tls: ssl.SSLSocket, pieces: Iterable[bytes], most: int) -> tuple[int, bytes | None]:
    """Writes ``pieces`` until the server answers or closes: the bytes written, and what the server
    said first (b"" when it closed) or None when everything was written unanswered. Fails past
    ``most`` bytes written."""
    sent = 0
    try:
        for piece in pieces:
            early = already_answered(tls)
            if early is not None:
                return sent, early
            assert sent <= most, f"still not refused after {sent} bytes"
            tls.sendall(piece)
            sent += len(piece)
    except (OSError, ssl.SSLError):
        return sent, b""
    return sent, None


def send_until_answered(tls: ssl.SSLSocket, pieces: Iterable[bytes], most: int) -> Outcome:
    """Writes ``pieces`` until the server answers or closes, and reads its answer."""
    sent, received = write_unless_answered(tls, pieces, most)
    status, head, body = _answer(tls, received or b"", 5)
    tls.close()
    return Outcome(status, sent, head, body)


def read_answer(tls: ssl.SSLSocket, received: bytes) -> Outcome:
    status, head, body = _answer(tls, received, 5)
    tls.close()
    return Outcome(status, 0, head, body)


def endless(first: bytes, repeated: bytes) -> Iterator[bytes]:
    yield first
    while True:
        yield repeated


def metric(served: Served, name: str, **labels: str) -> float:
    with served.client() as client:
        text = client.get("/metrics").text
    return next(
        s.value for f in text_string_to_metric_families(text) for s in f.samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    )


def answered_in(served: Served, content: bytes, path: str) -> float:
    """Seconds an ordinary review takes to be answered 200 on a new connection."""
    started = time.monotonic()
    with served.client() as client:
        response = client.post(path, content=content, headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    return time.monotonic() - started
