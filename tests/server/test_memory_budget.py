"""What the server holds for its clients is bounded (``--max-held-bytes``): slow bodies and answers
nobody reads cannot take a replica past its pod's memory limit, a request past the budget is
answered 503 with Retry-After, ordinary reviews are still answered at once, and an answer not taken
within ``--write-timeout`` is dropped. Against the real server over TLS."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from itertools import chain, repeat
from pathlib import Path

import orjson
import pytest
from server.hostile import (
    MiB,
    already_answered,
    Outcome,
    answered_in,
    connect,
    metric,
    peak_rss,
    read_answer,
    send_until_answered,
    write_unless_answered,
)
from server.reviews import VALIDATE, WORKLOAD, body, review, workload_pcs
from server.serverproc import Served, poll, serve

from deploy.chart import values

PROMPT = 2.5
"""Seconds an ordinary review may take while the server is under attack, a quarter of the API
server's default timeout (10 s), past which it would fail the request; on a machine busy enough
that a review took a tenth of a second before the attack, in proportion (``prompt``). A review that
waited for the attack's bodies would take their whole ``--body-timeout``."""
SLOWER = 25
"""How many times its time before the attack an ordinary review may take under attack."""
REVIEW = body(review(workload_pcs()))
PIECE = 64 * 1024
SETTLE = 2.0
"""Seconds a slow body waits, once written, for the server to read what the sockets hold."""
BUSY = {"error": "the server holds as many request and answer bytes as it may at once; retry shortly"}


def pod_memory_limit() -> int:
    limit = values()["resources"]["webhook"]["limits"]["memory"]
    assert limit.endswith("Mi")
    return int(limit[:-2]) * MiB


def head(length: int) -> bytes:
    return (
        f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def prompt(served: Served) -> float:
    """The bound for ``assert_answered_promptly``: ``PROMPT``, or longer where the machine is slow
    (other work on its cores) by the time an ordinary review takes before the attack."""
    before = sorted(answered_in(served, REVIEW, VALIDATE) for _ in range(5))[2]
    return max(PROMPT, SLOWER * before)


def assert_answered_promptly(served: Served, bound: float = PROMPT) -> None:
    for _ in range(3):
        assert answered_in(served, REVIEW, VALIDATE) < bound


def refused_busy(outcome: Outcome) -> bool:
    return (
        outcome.status == 503
        and outcome.header("retry-after") == "1"
        and outcome.header("connection") == "close"
        and orjson.loads(outcome.body) == BUSY
    )


class SlowBodies:
    """Bodies sent in full but for their last piece, on connections of their own, all at once: the
    server either holds them (until ``--body-timeout``) or refuses them."""

    def __init__(self, served: Served, count: int, size: int) -> None:
        self.served, self.size = served, size
        self.stalled: list[object] = []
        self.refused: list[Outcome] = []
        self.threads = [threading.Thread(target=self.send) for _ in range(count)]
        for thread in self.threads:
            thread.start()

    def send(self) -> None:
        tls = connect(self.served)
        pieces = chain([head(self.size)], repeat(b" " * PIECE, self.size // PIECE - 1))
        _, early = write_unless_answered(tls, pieces, most=self.size)
        # The server may not have read all that was written yet: its answer can still come.
        deadline = time.monotonic() + SETTLE
        while early is None and time.monotonic() < deadline:
            time.sleep(0.05)
            early = already_answered(tls)
        if early is None:
            self.stalled.append(tls)
        else:
            self.refused.append(read_answer(tls, early))

    def running(self) -> bool:
        return any(thread.is_alive() for thread in self.threads)

    def close(self) -> None:
        for thread in self.threads:
            thread.join()
        for tls in self.stalled:
            tls.close()  # type: ignore[attr-defined]


def test_fifty_slow_bodies_of_8_mib_leave_the_replica_under_its_memory_limit(tmp_path: Path) -> None:
    with serve(tmp_path, "--objects", str(WORKLOAD)) as served, peak_rss(served) as peak:
        bound = prompt(served)
        bodies = SlowBodies(served, 50, 8 * MiB)
        try:
            deadline = time.monotonic() + 60
            while bodies.running():
                assert time.monotonic() < deadline, "the slow bodies were neither held nor refused"
                assert_answered_promptly(served, bound)
            assert_answered_promptly(served, bound)
            held = metric(served, "webhook_held_bytes")
        finally:
            bodies.close()
    assert peak.value < pod_memory_limit()
    assert len(bodies.stalled) + len(bodies.refused) == 50
    assert len(bodies.stalled) * (8 * MiB - PIECE) <= held <= 48 * MiB
    assert all(refused_busy(outcome) for outcome in bodies.refused), bodies.refused


def test_twenty_clients_that_never_read_large_answers_leave_the_replica_under_its_memory_limit(tmp_path: Path) -> None:
    """The answer echoes the request's uid of 7.5 MB; none is read."""
    large = body(review(workload_pcs(), uid="u" * 7_500_000))
    with serve(tmp_path, "--objects", str(WORKLOAD)) as served, peak_rss(served) as peak:
        bound = prompt(served)
        readers = []
        try:
            for _ in range(20):
                tls = connect(served, receive_buffer=PIECE)
                readers.append(tls)
                try:
                    tls.sendall(head(len(large)) + large)
                except OSError:
                    pass  # refused (503) and closed before the body was all written
                assert answered_in(served, REVIEW, VALIDATE) < bound
            assert_answered_promptly(served, bound)
            held = metric(served, "webhook_held_bytes")
        finally:
            for tls in readers:
                tls.close()
    assert peak.value < pod_memory_limit()
    assert len(large) < held <= 64 * MiB


def test_an_answer_not_taken_is_dropped_at_the_write_timeout(tmp_path: Path) -> None:
    large = body(review(workload_pcs(), uid="u" * 6_000_000))
    with serve(tmp_path, "--objects", str(WORKLOAD), "--write-timeout", "1") as served:
        tls = connect(served, receive_buffer=PIECE)
        tls.sendall(head(len(large)) + large)
        sent = time.monotonic()
        poll(lambda: metric(served, "webhook_connections_dropped_total", reason="write_timeout") == 1, "the answer to be dropped", 10)
        assert 1 - 0.1 < time.monotonic() - sent < 1 + 3
        assert metric(served, "webhook_held_bytes") == 0
        assert_answered_promptly(served)
        tls.close()


SMALL_BUDGET = 4 * MiB
"""Three quarters of it (3 MiB) for holders over 256 KiB, the rest kept for ordinary reviews."""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    options = ("--max-held-bytes", str(SMALL_BUDGET), "--max-body-bytes", str(MiB))
    with serve(tmp_path_factory.mktemp("budget"), "--objects", str(WORKLOAD), *options) as served:
        yield served


def test_past_the_budget_a_large_body_is_503_and_ordinary_reviews_are_still_answered(small: Served) -> None:
    dropped = metric(small, "webhook_connections_dropped_total", reason="over_budget")
    bodies = SlowBodies(small, 3, MiB)
    try:
        for thread in bodies.threads:
            thread.join()
        assert (len(bodies.stalled), bodies.refused) == (3, [])
        poll(lambda: metric(small, "webhook_held_bytes") == 3 * (MiB - PIECE), "the three bodies to be held")
        refused = send_until_answered(connect(small), [head(MiB) + b" " * PIECE], most=2 * PIECE)
        assert refused_busy(refused), refused
        assert_answered_promptly(small)
    finally:
        bodies.close()
    poll(lambda: metric(small, "webhook_held_bytes") == 0, "the bodies to be let go")
    padded = REVIEW + b" " * (MiB - len(REVIEW))
    with small.client() as client:
        assert client.post(VALIDATE, content=padded).status_code == 200
    assert metric(small, "webhook_connections_dropped_total", reason="over_budget") - dropped == 1


def test_heads_still_arriving_count_in_the_budget(small: Served) -> None:
    """Three heads of 900 KiB, incomplete, hold most of three quarters of it: a fourth is cut off
    (a head that has not ended has no request to answer)."""
    dropped = metric(small, "webhook_connections_dropped_total", reason="over_budget")
    line = b"X-Pad: " + b"a" * (16 * 1024) + b"\r\n"
    partial = f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\n".encode() + line * 56
    heads = []
    try:
        for _ in range(3):
            tls = connect(small)
            tls.sendall(partial)
            heads.append(tls)
        poll(lambda: metric(small, "webhook_held_bytes") == 3 * len(partial), "the heads to be held")
        cut = send_until_answered(connect(small), [partial, line * 8], most=2 * len(partial))
        assert cut.status is None, cut
        assert_answered_promptly(small)
    finally:
        for tls in heads:
            tls.close()
    poll(lambda: metric(small, "webhook_held_bytes") == 0, "the heads to be let go")
    assert metric(small, "webhook_connections_dropped_total", reason="over_budget") - dropped == 1
