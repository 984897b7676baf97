"""Slow-start batches: 1, 2, 4, ... up to the limit; a failing batch ends the writing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from webhook.reconciler.sync.reconcile import LIMIT, slow_start


@pytest.fixture
def pool() -> Iterator[object]:
    executor = ThreadPoolExecutor(max_workers=LIMIT)
    yield executor
    executor.shutdown()


def test_batches_double_up_to_the_limit(pool: object) -> None:
    sizes: list[int] = []
    calls: list[int] = []
    lock = threading.Lock()

    def call(item: int) -> int:
        with lock:
            calls.append(item)
        return item * 10

    def before_batch() -> None:
        sizes.append(len(calls))

    results = list(slow_start(pool, list(range(40)), call, before_batch))  # type: ignore[arg-type]

    assert results == [(i, i * 10) for i in range(40)]
    assert [b - a for a, b in zip(sizes, [*sizes[1:], 40], strict=True)] == [1, 2, 4, 8, 8, 8, 8, 1]
    assert LIMIT == 8


def test_a_failing_batch_ends_the_writing(pool: object) -> None:
    def call(item: int) -> int:
        if item == 4:
            raise RuntimeError("quota exceeded")
        return item

    results = list(slow_start(pool, list(range(20)), call, lambda: None))  # type: ignore[arg-type]

    assert [item for item, _ in results] == [0, 1, 2, 3, 4, 5, 6]  # batches [0], [1, 2], [3 .. 6]
    failed = [(item, str(result)) for item, result in results if isinstance(result, Exception)]
    assert failed == [(4, "quota exceeded")]


def test_a_stop_before_a_batch_ends_the_writing(pool: object) -> None:
    class Stop(Exception):
        pass

    batches = iter([None, None, Stop()])

    def before_batch() -> None:
        if isinstance(stop := next(batches), Stop):
            raise stop

    written: list[int] = []
    with pytest.raises(Stop):
        for item, _ in slow_start(pool, list(range(20)), lambda item: item, before_batch):  # type: ignore[arg-type]
            written.append(item)
    assert written == [0, 1, 2]
