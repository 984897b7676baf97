"""Waiting without fixed sleeps: poll a condition until a deadline.

A fixed ``sleep(0.5)`` is both too long (slow suites) and too short (flaky
suites on a loaded CI machine); polling returns as soon as the condition holds
and fails with a clear message only when the deadline passes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout: float = 5.0, interval: float = 0.005,
               message: str = "condition") -> T:
    """Return the first truthy value of `condition()`, or raise `TimeoutError` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{message} not met within {timeout}s (last value: {value!r})")
        time.sleep(interval)
