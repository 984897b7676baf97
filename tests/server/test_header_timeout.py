"""``--header-timeout``: a connection that does not deliver a complete request head in time is closed,
so connections that never send a request cannot pile up, while kept-alive connections between
requests keep ``--keep-alive-timeout``. Against the real server over TLS."""

from __future__ import annotations

import os
import select
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
from prometheus_client.parser import text_string_to_metric_families
from server.reviews import VALIDATE, WORKLOAD, body, review, workload_pcs
from server.serverproc import Served, poll, serve

HEADER_TIMEOUT = 1.5
KEEP_ALIVE = 10.0
PROMPT = 1.0
"""Seconds a normal request may take while the stuck connections are open."""
MARGIN = 2.0
"""Seconds a stuck connection may outlive the header timeout: the check runs every few ms, but the
machine may be busy."""
REVIEW = body(review(workload_pcs()))
HALF_HEAD = f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n".encode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    options = ["--objects", str(WORKLOAD), "--header-timeout", str(HEADER_TIMEOUT), "--keep-alive-timeout", str(KEEP_ALIVE)]
    with serve(tmp_path_factory.mktemp("headers"), *options) as served:
        yield served


def port_of(served: Served) -> int:
    port = urlsplit(served.url).port
    assert port is not None
    return port


def open_descriptors(served: Served) -> int:
    return len(os.listdir(f"/proc/{served.process.pid}/fd"))


@dataclass
class Stuck:
    """A connection that never completes a request head, and when it was opened."""

    sock: socket.socket
    opened: float
    closed: float | None = None

    def check(self) -> bool:
        """Whether the server has closed it (noted the first time it is seen)."""
        if self.closed is None and select.select([self.sock], [], [], 0)[0]:
            try:
                ended = not self.sock.recv(1)
            except (OSError, ssl.SSLError):
                ended = True
            if ended:
                self.closed = time.monotonic()
        return self.closed is not None


def tls(served: Served) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=served.ca)
    return context.wrap_socket(socket.create_connection(("127.0.0.1", port_of(served))), server_hostname="localhost")


def silent(served: Served) -> Stuck:
    opened = time.monotonic()
    return Stuck(tls(served), opened)


def half_head(served: Served) -> Stuck:
    opened = time.monotonic()
    sock = tls(served)
    sock.sendall(HALF_HEAD)
    return Stuck(sock, opened)


def no_tls(served: Served) -> Stuck:
    return Stuck(socket.create_connection(("127.0.0.1", port_of(served))), time.monotonic())


def assert_others_answered_promptly(served: Served) -> None:
    with served.client() as client:
        for _ in range(2):
            started = time.monotonic()
            response = client.post(VALIDATE, content=REVIEW)
            assert (response.status_code, response.json()["response"]["allowed"]) == (200, True)
            assert time.monotonic() - started < PROMPT


def wait_closed(connections: list[Stuck]) -> None:
    poll(lambda: all([c.check() for c in connections]), "the server to close every stuck connection", HEADER_TIMEOUT + 10)
    for connection in connections:
        assert connection.closed is not None
        assert HEADER_TIMEOUT - 0.1 < connection.closed - connection.opened < HEADER_TIMEOUT + MARGIN
        connection.sock.close()


def dropped_for_header_timeout(served: Served) -> float:
    with served.client() as client:
        text = client.get("/metrics").text
    return next(
        s.value for f in text_string_to_metric_families(text) for s in f.samples
        if s.name == "webhook_connections_dropped_total" and s.labels["reason"] == "header_timeout"
    )


def test_connections_that_never_deliver_a_request_head_are_closed_and_their_descriptors_freed(server: Served) -> None:
    """Connections that never begin TLS are held to the same timeout, as Go's server holds them."""
    assert_others_answered_promptly(server)
    baseline, dropped = open_descriptors(server), dropped_for_header_timeout(server)
    stuck = [no_tls(server) for _ in range(40)] + [silent(server) for _ in range(40)] + [half_head(server) for _ in range(120)]
    assert open_descriptors(server) > baseline
    assert_others_answered_promptly(server)
    wait_closed(stuck)
    poll(lambda: open_descriptors(server) <= baseline, "the server's descriptors to return to what they were")
    assert dropped_for_header_timeout(server) - dropped == 40 + 40 + 120


def test_a_head_sent_byte_by_byte_is_cut_off_at_the_header_timeout(server: Served) -> None:
    trickling = half_head(server)
    trickling.sock.setblocking(False)
    stop = threading.Event()

    def trickle() -> None:
        for byte in b"X-Slow: " + b"a" * 1000:
            if stop.wait(0.05):
                return
            try:
                trickling.sock.send(bytes([byte]))
            except (OSError, ssl.SSLError):
                return

    thread = threading.Thread(target=trickle)
    thread.start()
    try:
        trickling.sock.setblocking(True)
        wait_closed([trickling])
    finally:
        stop.set()
        thread.join()


def test_a_kept_alive_connection_idle_between_requests_keeps_the_keep_alive_timeout(server: Served) -> None:
    """Idle for longer than the header timeout (a connection opened with it is closed meanwhile),
    it still carries the next request."""
    with server.client() as client:
        first = client.post(VALIDATE, content=REVIEW)
        waiting = silent(server)
        wait_closed([waiting])
        second = client.post(VALIDATE, content=REVIEW)
        ports = {r.extensions["network_stream"].get_extra_info("client_addr")[1] for r in (first, second)}
    assert (first.status_code, second.status_code, len(ports)) == (200, 200, 1)


def test_a_request_on_a_kept_alive_connection_has_the_header_timeout_from_its_first_byte(server: Served) -> None:
    sock = tls(server)
    sock.sendall(f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Length: {len(REVIEW)}\r\n\r\n".encode() + REVIEW)
    received = b""
    while b"\r\n\r\n" not in received or not received.endswith(b"}"):
        received += sock.recv(65536)
    assert received.startswith(b"HTTP/1.1 200")
    stuck = Stuck(sock, time.monotonic())
    sock.sendall(HALF_HEAD)
    wait_closed([stuck])
