"""The work queue of PodCliqueSet keys, with client-go's workqueue semantics: a key waits once
however many events name it and is processed by one worker at a time, and runs again if added
meanwhile, so that no change is lost and no two workers write one PodCliqueSet's claims; a failed
key comes back after a backoff of its own, so that one failing owner never delays another.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class WorkQueue(Generic[K]):
    def __init__(self, base_delay: float, max_delay: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.base_delay, self.max_delay = base_delay, max_delay
        self._clock = clock
        self._ready: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiting: list[tuple[float, int, K]] = []
        self._ready_at: dict[K, float] = {}
        """Each waiting key once, at its earliest time: a burst of delayed adds (a deletion per claim
        of a PodCliqueSet scaled in) makes one reconcile."""
        self._sequence = itertools.count()
        self._failures: dict[K, int] = {}
        self._shutting_down = False
        self._condition = threading.Condition()

    def add(self, key: K) -> None:
        with self._condition:
            self._add(key)

    def _add(self, key: K) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._ready.append(key)
            self._condition.notify()

    def add_after(self, key: K, delay: float) -> None:
        with self._condition:
            if delay <= 0:
                self._add(key)
                return
            ready = self._clock() + delay
            if self._ready_at.get(key, ready + 1) <= ready:
                return
            self._ready_at[key] = ready
            heapq.heappush(self._waiting, (ready, next(self._sequence), key))
            self._condition.notify()

    def add_rate_limited(self, key: K, cap: float | None = None) -> float:
        """Adds ``key`` after its next backoff delay (``cap`` at most), which it returns."""
        with self._condition:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
        delay = min(self.base_delay * 2.0 ** min(failures, 64), self.max_delay, self.max_delay if cap is None else cap)
        self.add_after(key, delay)
        return delay

    def retry_failed_now(self) -> int:
        """How many keys waiting for a retry after failures are ready now, their backoff reset."""
        with self._condition:
            failed = [key for key in self._ready_at if key in self._failures]
            for key in failed:
                del self._ready_at[key]
                del self._failures[key]
                self._add(key)
            return len(failed)

    def forget(self, key: K) -> None:
        """The key succeeded: its next failure starts again from the base delay."""
        with self._condition:
            self._failures.pop(key, None)

    def failures(self, key: K) -> int:
        with self._condition:
            return self._failures.get(key, 0)

    def get(self) -> K | None:
        """The next ready key, marked as processing; None once the queue is shut down."""
        with self._condition:
            while not self._shutting_down:
                now = self._clock()
                while self._waiting and self._waiting[0][0] <= now:
                    ready, _, key = heapq.heappop(self._waiting)
                    if self._ready_at.get(key) == ready:  # else superseded by an earlier time
                        del self._ready_at[key]
                        self._add(key)
                if self._ready:
                    key = self._ready.popleft()
                    self._dirty.discard(key)
                    self._processing.add(key)
                    return key
                self._condition.wait(self._waiting[0][0] - now if self._waiting else None)
            return None

    def done(self, key: K) -> None:
        with self._condition:
            self._processing.discard(key)
            if key in self._dirty:
                self._ready.append(key)
                self._condition.notify()

    def shut_down(self) -> None:
        """Workers get None from now on; keys still queued are dropped (a next start lists them)."""
        with self._condition:
            self._shutting_down = True
            self._condition.notify_all()

    def __len__(self) -> int:
        """Keys ready to be processed."""
        with self._condition:
            return len(self._ready)

    @property
    def idle(self) -> bool:
        """Nothing ready, waiting or being processed."""
        with self._condition:
            return not (self._ready or self._ready_at or self._processing)

    @property
    def waiting(self) -> int:
        """Keys waiting for their retry delay."""
        with self._condition:
            return len(self._ready_at)
