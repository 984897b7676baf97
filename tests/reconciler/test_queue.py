"""The work queue: one entry per key, one worker per key, retries with a capped backoff."""

from __future__ import annotations

import threading
import time

import pytest
from fakeapi import wait_until

from webhook.reconciler.queue import WorkQueue


def test_a_key_waits_once_however_often_it_is_added() -> None:
    queue: WorkQueue[str] = WorkQueue(0.01, 1)
    for key in ["a", "b", "a", "a", "b", "c"]:
        queue.add(key)
    assert len(queue) == 3
    assert [queue.get(), queue.get(), queue.get()] == ["a", "b", "c"]


def test_a_key_added_while_processed_runs_again_after_and_never_twice_at_once() -> None:
    queue: WorkQueue[str] = WorkQueue(0.01, 1)
    queue.add("a")
    assert queue.get() == "a"
    queue.add("a")
    queue.add("a")
    assert len(queue) == 0  # not handed to a second worker while the first holds it
    queue.done("a")
    assert len(queue) == 1
    assert queue.get() == "a"
    queue.done("a")
    assert len(queue) == 0


@pytest.mark.parametrize(
    ("base", "cap", "delays"),
    [(0.5, 300, [0.5, 1, 2, 4, 8]), (1, 3, [1, 2, 3, 3])],
    ids=["doubling", "capped"],
)
def test_retry_delays_double_up_to_the_cap_and_reset_on_success(base: float, cap: float, delays: list[float]) -> None:
    queue: WorkQueue[str] = WorkQueue(base, cap)
    assert [queue.add_rate_limited("a") for _ in delays] == delays
    assert queue.add_rate_limited("b") == base  # each key has its own backoff
    queue.forget("a")
    assert queue.add_rate_limited("a") == base


def test_a_delayed_key_becomes_ready_after_its_delay() -> None:
    queue: WorkQueue[str] = WorkQueue(0.01, 1)
    queue.add_after("late", 0.2)
    queue.add("now")
    began = time.monotonic()
    assert queue.get() == "now"
    assert queue.waiting == 1
    assert queue.get() == "late"
    assert 0.15 <= time.monotonic() - began < 2


def test_shut_down_wakes_every_waiting_worker() -> None:
    queue: WorkQueue[str] = WorkQueue(0.01, 1)
    got: list[str | None] = []
    workers = [threading.Thread(target=lambda: got.append(queue.get())) for _ in range(3)]
    for worker in workers:
        worker.start()
    queue.shut_down()
    for worker in workers:
        worker.join(2)
    assert got == [None, None, None]
    queue.add("a")
    assert queue.get() is None


def test_workers_share_keys_without_overlap() -> None:
    queue: WorkQueue[int] = WorkQueue(0.01, 1)
    active: set[int] = set()
    overlaps: list[int] = []
    done: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        while (key := queue.get()) is not None:
            with lock:
                if key in active:
                    overlaps.append(key)
                active.add(key)
            with lock:
                active.discard(key)
                done.append(key)
            queue.done(key)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for worker in workers:
        worker.start()
    for round_ in range(50):
        for key in range(10):
            queue.add(key)
    wait_until(lambda: len(queue) == 0 and len(done) >= 10, message="queue drained")
    queue.shut_down()
    for worker in workers:
        worker.join(2)
    assert overlaps == []
    assert set(done) == set(range(10))


def test_delayed_adds_of_one_key_wait_once_at_the_earliest_time() -> None:
    now = [100.0]
    queue: WorkQueue[str] = WorkQueue(0.01, 1, clock=lambda: now[0])
    for delay in (1.0, 0.5, 0.8, 2.0):
        queue.add_after("a", delay)
    assert queue.waiting == 1
    now[0] = 100.5
    assert queue.get() == "a"
    queue.done("a")
    now[0] = 103.0  # every later delayed add of "a" was folded into the first
    queue.add("b")
    assert queue.get() == "b"
    assert len(queue) == 0 and queue.waiting == 0


def test_a_retry_bound_shortens_the_backoff_but_still_counts_the_failure() -> None:
    queue: WorkQueue[str] = WorkQueue(10, 300)
    assert [queue.add_rate_limited("a", cap=5) for _ in range(3)] == [5, 5, 5]
    assert queue.failures("a") == 3
    assert queue.add_rate_limited("a") == 80  # without the bound, the count it has reached


def test_keys_waiting_after_failures_run_now_when_the_api_server_is_back() -> None:
    """The work the outage failed runs at once, with its backoff reset; keys that are only
    delayed (not failed) keep their time."""
    now = [100.0]
    queue: WorkQueue[str] = WorkQueue(10, 300, clock=lambda: now[0])
    for _ in range(3):
        queue.add_rate_limited("failed")
    queue.add_after("delayed", 5)
    assert queue.idle is False and len(queue) == 0

    assert queue.retry_failed_now() == 1

    assert queue.get() == "failed"
    assert queue.failures("failed") == 0 and queue.waiting == 1
    queue.done("failed")
    now[0] = 105.0
    assert queue.get() == "delayed"
    queue.done("delayed")
    now[0] = 200.0  # the superseded retry time of "failed" passes without running it again
    queue.add("other")
    assert queue.get() == "other"
    queue.done("other")
    assert queue.idle
