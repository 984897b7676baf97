"""Request heads are bounded in bytes, line length and lines (``--max-header-bytes``,
``--max-header-line-bytes``, ``--max-headers``): a complete head over a line's or the lines' limit is
answered 431 and its connection closed; a head (or a chunked body's trailers) that grows past
``--max-header-bytes`` without ending has its connection dropped; and the server's memory grows by
no more than the limit per connection. Against the real server over TLS, with the default limits."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from server.asgi import call
from server.hostile import MiB, Outcome, connect, endless, metric, peak_rss, send_until_answered
from server.reviews import VALIDATE, WORKLOAD, body, review, workload_pcs
from server.memorystore import MemoryStore
from server.serverproc import Served, serve

from webhook.server.app import create_app
from webhook.settings import ServeSettings

CAP = 1 * MiB
"""The default --max-header-bytes."""
REVIEW = body(review(workload_pcs()))
REQUEST_LINE = f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\n".encode()
PIECE = 64 * 1024
READ_AHEAD = 1 * MiB
"""What a connection streaming at full speed holds besides its head: OpenSSL's input buffer (uvloop
reads up to 256 KiB ahead), the data handed over, copied on its way, and the one read the
connection guard lets take it past the cap."""
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


def cut_off(outcome: Outcome) -> None:
    """Dropped without an answer: the head never ended, so there is no request to answer."""
    assert outcome.status is None, outcome


def dropped(served: Served) -> float:
    return metric(served, "webhook_connections_dropped_total", reason="header_too_large")


def test_endless_header_lines_on_four_connections_are_cut_off_at_the_cap(server: Served) -> None:
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
        cut_off(outcome)
    assert peak.value - before_rss <= 4 * (CAP + READ_AHEAD)
    assert dropped(server) - before == 4


def test_one_endless_header_line_is_cut_off_at_the_cap(server: Served) -> None:
    """A line that never ends is a head that never ends: dropped at the head's limit."""
    before = dropped(server)
    with peak_rss(server) as peak:
        before_rss = peak.value
        outcome = send_until_answered(connect(server), endless(REQUEST_LINE + b"X-Huge: ", b"a" * PIECE), most=MOST)
    cut_off(outcome)
    assert peak.value - before_rss <= CAP + READ_AHEAD
    assert dropped(server) - before == 1


def test_a_header_line_of_a_megabyte_within_the_cap_is_431(server: Served) -> None:
    head = REQUEST_LINE + b"X-Huge: " + b"a" * 1_000_000 + f"\r\nContent-Length: {len(REVIEW)}\r\n\r\n".encode()
    refused(send_until_answered(connect(server), [head + REVIEW], most=len(head) + len(REVIEW)), "request line is longer than the limit of 65536 bytes")


def test_ten_thousand_headers_are_431(server: Served) -> None:
    head = REQUEST_LINE + b"".join(b"X-H%d: v\r\n" % n for n in range(10_000)) + f"Content-Length: {len(REVIEW)}\r\n\r\n".encode()
    refused(send_until_answered(connect(server), [head + REVIEW], most=len(head) + len(REVIEW)), "request has more than 100 header lines")


def test_an_endless_trailer_of_a_chunked_body_is_cut_off(server: Served) -> None:
    """The request is under way (its body is being read), so it is dropped rather than answered; the
    connection may hold one read past the cap before it is, as for a head."""
    before = dropped(server)
    head = REQUEST_LINE + b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(REVIEW) + REVIEW + b"\r\n0\r\nX-Trailer: "
    with peak_rss(server) as peak:
        before_rss = peak.value
        outcome = send_until_answered(connect(server), endless(head, b"a" * PIECE), most=MOST)
    cut_off(outcome)
    assert peak.value - before_rss <= CAP + READ_AHEAD
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


def test_a_complete_head_whose_lines_add_up_to_more_than_the_cap_is_431() -> None:
    """In-process, so the head arrives whole: the request limits refuse it before any application
    code sees it (over TLS a head that grows past the cap without ending is cut off, above)."""
    app = create_app(ServeSettings(max_header_bytes=4096), MemoryStore())
    headers = {f"X-H{n}": "v" * 1000 for n in range(5)}
    response = call(app, "POST", VALIDATE, REVIEW, headers)
    assert (response.status_code, response.headers["connection"]) == (431, "close")
    assert response.json() == {"error": "request head is longer than the limit of 4096 bytes"}
    assert call(app, "POST", VALIDATE, REVIEW, {"X-H": "v" * 1000}).status_code == 200
