"""Request heads are bounded in bytes, line length and lines (``--max-header-bytes``,
``--max-header-line-bytes``, ``--max-headers``): past a limit the client gets 431 and its connection
closes, and the server's memory grows by no more than the limit per connection. Against the real
server over TLS, with the default limits."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from server.hostile import MiB, Outcome, connect, endless, metric, peak_rss, send_until_answered
from server.reviews import VALIDATE, WORKLOAD, body, review, workload_pcs
from server.serverproc import Served, serve

CAP = 1 * MiB
"""The default --max-header-bytes."""
REVIEW = body(review(workload_pcs()))
REQUEST_LINE = f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\n".encode()
PIECE = 64 * 1024
READ_AHEAD = 1 * MiB
"""What a connection streaming at full speed holds besides its head: OpenSSL's input buffer (uvloop
reads up to 256 KiB ahead) and the data handed over, copied on its way."""
MOST = CAP + 16 * MiB
"""Bytes a client may write before it sees the refusal: what the server reads up to the cap, plus
what the sockets' buffers take meanwhile and what the server reads and discards while it closes."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("heads"), "--objects", str(WORKLOAD)) as served:
        yield served


def refused(outcome: Outcome, message: str) -> None:
    assert outcome.status == 431, outcome
    assert outcome.header("connection") == "close"
    assert outcome.body == b'{"error":"' + message.encode() + b'"}'


def dropped(served: Served) -> float:
    return metric(served, "webhook_connections_dropped_total", reason="header_too_large")


def test_endless_header_lines_on_four_connections_are_431_at_the_cap(server: Served) -> None:
    before = dropped(server)
    outcomes: list[Outcome] = []
    line = b"X-Pad: " + b"a" * (16 * 1024) + b"\r\n"

    def attack() -> None:
        outcomes.append(send_until_answered(connect(server), endless(REQUEST_LINE, line), most=MOST))

    with peak_rss(server) as peak:
        before_rss = peak.value
        threads = [threading.Thread(target=attack) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    for outcome in outcomes:
        refused(outcome, f"request head is longer than the limit of {CAP} bytes")
    assert peak.value - before_rss <= 4 * (CAP + READ_AHEAD)
    assert dropped(server) - before == 4


def test_one_endless_header_line_is_431_at_the_line_limit(server: Served) -> None:
    """Refused once the line under way is known to be over its limit, well before the head's."""
    with peak_rss(server) as peak:
        before_rss = peak.value
        outcome = send_until_answered(connect(server), endless(REQUEST_LINE + b"X-Huge: ", b"a" * PIECE), most=MOST)
    refused(outcome, "request line is longer than the limit of 65536 bytes")
    assert peak.value - before_rss <= CAP


def test_a_header_line_of_a_megabyte_within_the_cap_is_431(server: Served) -> None:
    head = REQUEST_LINE + b"X-Huge: " + b"a" * 1_000_000 + f"\r\nContent-Length: {len(REVIEW)}\r\n\r\n".encode()
    refused(send_until_answered(connect(server), [head + REVIEW], most=len(head) + len(REVIEW)), "request line is longer than the limit of 65536 bytes")


def test_ten_thousand_headers_are_431(server: Served) -> None:
    head = REQUEST_LINE + b"".join(b"X-H%d: v\r\n" % n for n in range(10_000)) + f"Content-Length: {len(REVIEW)}\r\n\r\n".encode()
    refused(send_until_answered(connect(server), [head + REVIEW], most=len(head) + len(REVIEW)), "request has more than 100 header lines")


def test_an_endless_trailer_of_a_chunked_body_is_cut_off(server: Served) -> None:
    """The request is under way (its body is being read), so it is dropped rather than answered."""
    before = dropped(server)
    head = REQUEST_LINE + b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(REVIEW) + REVIEW + b"\r\n0\r\nX-Trailer: "
    with peak_rss(server) as peak:
        before_rss = peak.value
        outcome = send_until_answered(connect(server), endless(head, b"a" * PIECE), most=MOST)
    assert outcome.status is None
    assert peak.value - before_rss <= CAP
    assert dropped(server) - before == 1


def test_heads_within_the_limits_are_answered_on_one_connection(server: Served) -> None:
    """Many headers, a long line, and requests pipelined in one write after a large body."""
    headers = b"".join(b"X-H%d: v\r\n" % n for n in range(90)) + b"X-Token: " + b"t" * 60_000 + b"\r\n"
    request = REQUEST_LINE + headers + f"Content-Length: {len(REVIEW)}\r\n\r\n".encode() + REVIEW
    tls = connect(server)
    tls.sendall(request * 3)
    received = b""
    while received.count(b"HTTP/1.1 200 OK") < 3:
        chunk = tls.recv(65536)
        assert chunk, received
        received += chunk
    tls.close()
