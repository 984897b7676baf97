"""Clients that send too slowly, too much or too deep, against the real server over TLS: each gets a
clear answer of its own, and none holds up anyone else's request."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from server.rawclient import RawRequest
from server.reviews import VALIDATE, WORKLOAD, body, review, workload_pcs
from server.serverproc import Served, serve

LIMIT = 200_000
BODY_TIMEOUT = 2.0
PROMPT = 1.0
"""Seconds a normal request may take while others stall: half the body timeout, so a server that
waited for the stalled body before answering anyone else could not pass."""

REVIEW = body(review(workload_pcs()))
HEADERS = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    options = ["--objects", str(WORKLOAD), "--max-body-bytes", str(LIMIT), "--body-timeout", str(BODY_TIMEOUT)]
    with serve(tmp_path_factory.mktemp("slow"), *options) as served:
        yield served


def assert_others_answered_promptly(server: Served) -> None:
    """A normal review on a new connection, and another on the same one, each answered within PROMPT."""
    with server.client() as client:
        for _ in range(2):
            started = time.monotonic()
            response = client.post(VALIDATE, content=REVIEW, headers=HEADERS)
            assert (response.status_code, response.json()["response"]["allowed"]) == (200, True)
            assert time.monotonic() - started < PROMPT


@contextmanager
def trickling(request: RawRequest, data: bytes, interval: float) -> Iterator[None]:
    """``data`` sent one byte every ``interval`` seconds, in a thread, until the server hangs up."""
    stop = threading.Event()

    def run() -> None:
        for byte in data:
            if stop.wait(interval):
                return
            try:
                request.send(bytes([byte]))
            except OSError:
                return

    thread = threading.Thread(target=run)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


TIMED_OUT = {"error": f"request body not received in full within {BODY_TIMEOUT:g} s"}


def test_a_body_that_never_comes_holds_up_no_one_and_gets_408(server: Served) -> None:
    stalled = RawRequest(server, VALIDATE, {**HEADERS, "Content-Length": str(len(REVIEW))})
    stalled.send(REVIEW[:100])
    assert_others_answered_promptly(server)
    status, headers, answer, waited = stalled.response(deadline=BODY_TIMEOUT + 5)
    assert (status, answer, headers["connection"]) == (408, TIMED_OUT, "close")
    assert BODY_TIMEOUT - 0.5 < waited < BODY_TIMEOUT + 2


def test_a_body_sent_byte_by_byte_holds_up_no_one_and_gets_408(server: Served) -> None:
    slow = RawRequest(server, VALIDATE, {**HEADERS, "Content-Length": str(len(REVIEW))})
    with trickling(slow, REVIEW, interval=0.02):
        assert_others_answered_promptly(server)
        status, _, answer, _ = slow.response(deadline=BODY_TIMEOUT + 5)
    assert (status, answer) == (408, TIMED_OUT)


def test_a_body_sent_in_pieces_within_the_timeout_is_decided(server: Served) -> None:
    request = RawRequest(server, VALIDATE, {**HEADERS, "Content-Length": str(len(REVIEW)), "Connection": "close"})
    piece = len(REVIEW) // 5 + 1
    for start in range(0, len(REVIEW), piece):
        request.send(REVIEW[start : start + piece])
        time.sleep(0.05)
    status, _, answer, _ = request.response(deadline=5)
    assert (status, answer["response"]["allowed"]) == (200, True)  # type: ignore[index]


TOO_LARGE = {"error": f"request body is larger than the limit of {LIMIT} bytes"}


def test_an_announced_body_over_the_limit_is_413_before_it_is_sent(server: Served) -> None:
    request = RawRequest(server, VALIDATE, {**HEADERS, "Content-Length": str(100 * LIMIT)})
    status, headers, answer, waited = request.response(deadline=5)
    assert (status, answer, headers["connection"]) == (413, TOO_LARGE, "close")
    assert waited < PROMPT


def test_a_chunked_body_over_the_limit_is_413_as_soon_as_it_is_over(server: Served) -> None:
    """Only a little more than the limit is ever sent, and the chunked body is never finished."""
    request = RawRequest(server, VALIDATE, {**HEADERS, "Transfer-Encoding": "chunked"})
    chunk = b" " * 16_384
    for _ in range(LIMIT // len(chunk) + 2):
        request.send(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
    status, headers, answer, waited = request.response(deadline=5)
    assert (status, answer, headers["connection"]) == (413, TOO_LARGE, "close")
    assert waited < PROMPT


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"[" * 100_000, id="100000-brackets"),
        pytest.param(REVIEW.replace(b'"replicas":1', b'"replicas":' + b"[" * 100_000, 1), id="100000-brackets-inside-a-review"),
        pytest.param(b'{"a":' * 30_000, id="30000-objects"),
    ],
)
def test_deep_nesting_is_400_not_a_recursion_error(server: Served, content: bytes) -> None:
    with server.client() as client:
        response = client.post(VALIDATE, content=content, headers=HEADERS)
        assert response.status_code == 400
        assert response.json()["error"].startswith("request body is not valid JSON: depth limit exceeded")
        assert client.get("/healthz").status_code == 200
    assert "Traceback" not in server.log_text()
