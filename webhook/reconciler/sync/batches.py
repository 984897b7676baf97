"""Claim writes in slow-start batches: 1, 2, 4, ... up to a limit, concurrent within a batch.

A thousand claims written one request at a time cost a thousand round trips end to end; all at
once, they would hit the API server with a burst, and with the same error a thousand times when
something is wrong (a quota, an admission webhook that refuses them). client-go's controllers
(ReplicaSet, Job) start with one request, double the batch after each batch that fully succeeds,
and stop at the first batch with a failure; so does this (``sync.writes`` writes with it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar


T = TypeVar("T")
R = TypeVar("R")

LIMIT = 8
"""Largest batch, and the writes in flight at once in the whole process (the pool's size)."""


def write_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=LIMIT, thread_name_prefix="claim-write")


def slow_start(
    pool: ThreadPoolExecutor,
    items: Sequence[T],
    call: Callable[[T], R],
    before_batch: Callable[[], None],
) -> Iterator[tuple[T, R | Exception]]:
    """``(item, result or exception)`` for each item written; after a batch in which a call raised,
    the remaining items are not written (and not yielded)."""
    start, size = 0, 1
    while start < len(items):
        before_batch()
        batch = items[start : start + size]
        futures = [pool.submit(call, item) for item in batch]
        failed = False
        for item, future in zip(batch, futures, strict=True):
            try:
                yield item, future.result()
            except Exception as err:  # noqa: BLE001 - handed to the caller, which knows what it means
                failed = True
                yield item, err
        if failed:
            return
        start, size = start + size, min(size * 2, LIMIT)

