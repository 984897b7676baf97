"""Fault injection: answer chosen requests with an error instead of serving them.

Retry and error paths (a 409 on the first update, a 500 from a list, a 429
with Retry-After) are what real clusters do now and then and what unit tests
cannot reach through a real client otherwise. Rules are used up in the order
they were added; each answers `times` matching requests, then is gone. Hold rules
delay matching requests instead (a slow API server), then let them through.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Fault:
    """One rule: which requests, and the Status to answer them with."""

    method: str | None  # None or "*": any method
    path: re.Pattern[str]
    status: int
    reason: str
    message: str
    times: int
    query: re.Pattern[str] | None = None
    retry_after_seconds: int | None = None
    hits: list[str] = field(default_factory=list)

    def matches(self, method: str, path: str, query: str) -> bool:
        return (self.method in (None, "*", method.upper())
                and self.path.search(path) is not None
                and (self.query is None or self.query.search(query) is not None))

    def body(self) -> dict[str, Any]:
        details: dict[str, Any] = {}
        if self.retry_after_seconds is not None:
            details["retryAfterSeconds"] = self.retry_after_seconds
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason, "details": details, "code": self.status}

    def headers(self) -> dict[str, str]:
        if self.retry_after_seconds is None:
            return {}
        return {"Retry-After": str(self.retry_after_seconds)}


@dataclass
class Hold:
    """A rule that holds matching requests for `seconds` before they are served (or faulted):
    an API server slow to answer."""

    method: str | None
    path: re.Pattern[str]
    seconds: float
    times: int

    def matches(self, method: str, path: str) -> bool:
        return self.method in (None, "*", method.upper()) and self.path.search(path) is not None


class FaultInjector:
    """The pending rules; `take` consumes one use of the first rule that matches."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[Fault] = []
        self._holds: list[Hold] = []
        self._generation = 0

    def hold(self, method: str | None, path_regex: str, seconds: float, *, times: int = 1) -> Hold:
        rule = Hold(method.upper() if method else None, re.compile(path_regex), seconds, times)
        with self._lock:
            self._holds.append(rule)
        return rule

    def take_hold(self, method: str, path: str, query: str) -> tuple[float, int] | None:
        """Seconds to hold this request, using up one use of the first hold rule that matches,
        and the generation that `released` compares with."""
        with self._lock:
            for rule in self._holds:
                if rule.matches(method, path):
                    rule.times -= 1
                    if rule.times <= 0:
                        self._holds.remove(rule)
                    return rule.seconds, self._generation
        return None

    def released(self, generation: int) -> bool:
        """Whether the rules have been cleared since `generation`: held requests go on at once."""
        with self._lock:
            return self._generation != generation

    def add(self, method: str | None, path_regex: str, status: int, reason: str, *, times: int = 1,
            message: str | None = None, query_regex: str | None = None,
            retry_after_seconds: int | None = None) -> Fault:
        rule = Fault(method.upper() if method else None, re.compile(path_regex), status, reason,
                     message or f"injected fault: {reason}", times,
                     re.compile(query_regex) if query_regex else None, retry_after_seconds)
        with self._lock:
            self._rules.append(rule)
        return rule

    def take(self, method: str, path: str, query: str) -> Fault | None:
        with self._lock:
            for rule in self._rules:
                if rule.matches(method, path, query):
                    rule.times -= 1
                    rule.hits.append(f"{method.upper()} {path}?{query}")
                    if rule.times <= 0:
                        self._rules.remove(rule)
                    return rule
        return None

    @property
    def pending(self) -> int:
        with self._lock:
            return sum(rule.times for rule in self._rules) + sum(rule.times for rule in self._holds)

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()
            self._holds.clear()
            self._generation += 1
