"""The one bounded cache: what it keeps, for how long, and that a value many ask for at once is read
once. Every remembered answer in the project goes through it, so this is where it is tested."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from webhook.core.boundedcache import BoundedCache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_it_keeps_at_most_its_size_the_least_recently_used_going_first() -> None:
    cache: BoundedCache[str, int] = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c"), len(cache)) == (1, None, 3, 2)


def test_an_entry_expires_after_its_time_to_live_and_a_written_cache_keeps_only_the_living() -> None:
    clock = Clock()
    cache: BoundedCache[str, str] = BoundedCache(100, ttl=5.0, clock=clock)
    cache.put("short", "x", ttl=1.0)
    cache.put("default", "y")
    clock.now += 2
    assert ("short" in cache, "default" in cache) == (False, True)
    cache.put("never", "z", ttl=0)
    assert "never" not in cache
    for n in range(10):
        cache.put(str(n), "old")
    clock.now += 10
    cache.put("new", "fresh")
    assert len(cache) == 1


def test_threads_asking_at_once_wait_for_one_read_and_a_failed_read_is_not_remembered() -> None:
    cache: BoundedCache[str, int] = BoundedCache(10)
    reads: list[str] = []
    started, release = threading.Event(), threading.Event()

    def read() -> int:
        reads.append("read")
        started.set()
        release.wait(5)
        return 7

    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(cache.load("k", read))) for _ in range(5)]
    for thread in threads:
        thread.start()
    assert started.wait(5)
    release.set()
    for thread in threads:
        thread.join(5)
    assert (results, reads) == ([7] * 5, ["read"])

    def fails() -> int:
        raise OSError("no answer")

    with pytest.raises(OSError):
        cache.load("other", fails)
    assert cache.load("other", lambda: 3, ttl_of=lambda value: 60.0) == 3


def test_coroutines_asking_at_once_share_one_read_whoever_gives_up() -> None:
    async def scenario() -> tuple[list[Any], int]:
        cache: BoundedCache[str, bool] = BoundedCache(10)
        reads = 0
        gate = asyncio.Event()

        async def read() -> bool:
            nonlocal reads
            reads += 1
            await gate.wait()
            return True

        impatient = asyncio.ensure_future(cache.load_async("k", read))
        patient = [asyncio.ensure_future(cache.load_async("k", read)) for _ in range(3)]
        await asyncio.sleep(0)
        impatient.cancel()
        gate.set()
        answers = await asyncio.gather(*patient)
        answers.append(await cache.load_async("k", read))
        return answers, reads

    assert asyncio.run(scenario()) == ([True] * 4, 1)
