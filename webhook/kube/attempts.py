"""When a loop that talks to the API server tries again, and what it logs: a short, capped delay,
the shortest again once an attempt gets through, so that the loop is back soon after the API
server however long it was away; a WARNING when an outage starts (again every ``REPEAT_WARNING``
seconds), an INFO line when it is over.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

REPEAT_WARNING = 30.0


class Attempts:
    def __init__(
        self, what: str, on_recovered: Callable[[], None] | None = None, initial: float = 0.2, cap: float = 2.0
    ) -> None:
        self.what = what
        self.initial, self.cap, self.delay = initial, cap, initial
        self.failures = 0
        """Attempts failed since the last success."""
        self._on_recovered = on_recovered
        self._failing_since = 0.0
        self._warned_at = 0.0

    def failed(self, why: str) -> float:
        """One attempt failed: logs it (or not) and returns the seconds to wait before the next."""
        now = time.monotonic()
        if not self.failures:
            self._failing_since = now
        self.failures += 1
        delay, self.delay = self.delay * random.uniform(0.8, 1.0), min(self.delay * 2, self.cap)
        if self.failures == 1 or now - self._warned_at >= REPEAT_WARNING:
            self._warned_at = now
            since = f", failing for {now - self._failing_since:.0f}s" if self.failures > 1 else ""
            log.warning("%s failed (%s%s); retrying", self.what, why, since)
        else:
            log.debug("%s failed (%s); retrying in %.1fs", self.what, why, delay)
        return delay

    def reset(self) -> None:
        """The next failure waits the shortest delay again."""
        self.delay = self.initial

    def succeeded(self) -> None:
        """An attempt got through: after failures, the recovery is logged and reported."""
        self.reset()
        if not self.failures:
            return
        log.info("%s is back after %d failed attempts in %.0fs", self.what, self.failures, time.monotonic() - self._failing_since)
        self.failures = 0
        if self._on_recovered is not None:
            try:
                self._on_recovered()
            except Exception:  # noqa: BLE001 - a callback bug must not stop the loop
                log.exception("recovery callback of %s failed", self.what)
