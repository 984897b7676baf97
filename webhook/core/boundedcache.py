"""The bounded cache every remembered answer in this project goes through: at most ``size`` entries,
the least recently used dropped first, each expiring after ``ttl`` seconds (the cache's or its own).
However many threads (``load``) or coroutines of one loop (``load_async``) ask for a missing value
at once, one read is made, and what it raises is handed to its askers, not remembered. Every change
is made under the lock; a read takes none, each step of the dictionary's being atomic."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar, cast

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

NEVER = math.inf
READ_WAIT = 60.0
"""Longest wait for another thread's read of the same key before looking again."""

_ABSENT: Any = object()


class BoundedCache(Generic[K, V]):
    def __init__(self, size: int, ttl: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.size = size
        self.ttl = ttl
        self._clock = clock
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()
        self._reading: dict[K, threading.Event] = {}
        self._pending: dict[K, asyncio.Future[V]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: K) -> bool:
        return self.get(key, _ABSENT) is not _ABSENT

    def get(self, key: K, default: Any = None) -> Any:
        """The value remembered for ``key``, now the most recently used."""
        found = self._entries.get(key)
        if found is None:
            return default
        if found[0] != NEVER and found[0] <= self._clock():
            self._entries.pop(key, None)
            return default
        try:
            self._entries.move_to_end(key)
        except KeyError:
            pass  # dropped for room by another thread meanwhile: the value found is still good
        return found[1]

    def put(self, key: K, value: V, ttl: float | None = None) -> None:
        """Remember ``value`` for ``ttl`` seconds (the cache's by default; not at all if <= 0)."""
        ttl = self.ttl if ttl is None else ttl
        if ttl is not None and ttl <= 0:
            self.discard(key)
            return
        now = self._clock() if ttl is not None else None
        with self._lock:
            self._entries[key] = (NEVER if now is None or ttl is None else now + ttl, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
            if now is not None:
                self._drop_expired(now)

    def _drop_expired(self, now: float) -> None:
        """Oldest first: with one ``ttl`` for all, a cache written to keeps only the living."""
        while self._entries:
            key, (deadline, _) = next(iter(self._entries.items()))
            if deadline > now:
                return
            del self._entries[key]

    def discard(self, key: K) -> V | None:
        with self._lock:
            found = self._entries.pop(key, None)
        return None if found is None else found[1]

    def load(self, key: K, read: Callable[[], V], ttl_of: Callable[[V], float | None] | None = None) -> V:
        """The value for ``key``: remembered, else read and kept for ``ttl_of(value)`` seconds."""
        while True:
            with self._lock:
                found = self.get(key, _ABSENT)
                if found is not _ABSENT:
                    return cast(V, found)
                reading = self._reading.get(key)
                if reading is None:
                    self._reading[key] = threading.Event()
            if reading is None:
                break
            reading.wait(READ_WAIT)
        try:
            value = read()
            self.put(key, value, None if ttl_of is None else ttl_of(value))
            return value
        finally:
            with self._lock:
                self._reading.pop(key).set()

    async def load_async(self, key: K, read: Callable[[], Awaitable[V]], ttl_of: Callable[[V], float | None] | None = None) -> V:
        """``load`` for coroutines of one event loop; an asker cancelled leaves the read to others."""
        found = self.get(key, _ABSENT)
        if found is not _ABSENT:
            return cast(V, found)
        pending = self._pending.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._read_async(key, read, ttl_of))
            self._pending[key] = pending
            pending.add_done_callback(lambda done: self._settled(key, done))
        return await asyncio.shield(pending)

    async def _read_async(self, key: K, read: Callable[[], Awaitable[V]], ttl_of: Callable[[V], float | None] | None) -> V:
        value = await read()
        self.put(key, value, None if ttl_of is None else ttl_of(value))
        return value

    def _settled(self, key: K, done: asyncio.Future[V]) -> None:
        self._pending.pop(key, None)
        if not done.cancelled():
            done.exception()  # retrieved here: every asker may have gone (their requests cut off)
