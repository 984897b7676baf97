"""A thread-safe log of the API requests the server answered.

Benchmarks and tests count API calls ("one list and one watch, no per-object
GETs"), so every request is recorded as it arrives, before fault injection,
with its raw query string and the parsed parameters.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import NamedTuple
from urllib.parse import parse_qs


class RecordedRequest(NamedTuple):
    """One request: method (upper case), URL path, raw query string."""

    method: str
    path: str
    query: str

    @property
    def params(self) -> dict[str, str]:
        """Query parameters, last value wins."""
        return {k: v[-1] for k, v in parse_qs(self.query, keep_blank_values=True).items()}

    @property
    def is_watch(self) -> bool:
        return self.params.get("watch", "").lower() in ("1", "t", "true") or "/watch/" in self.path


class RequestLog:
    """Append-only while the server runs; `reset` clears it between phases of a test."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[RecordedRequest] = []

    def record(self, method: str, path: str, query: str) -> None:
        with self._lock:
            self._entries.append(RecordedRequest(method.upper(), path, query))

    def reset(self) -> None:
        with self._lock:
            self._entries.clear()

    def snapshot(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._entries)

    def __iter__(self) -> Iterator[RecordedRequest]:
        return iter(self.snapshot())

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def matching(self, method: str | None = None, path_regex: str | None = None,
                 watch: bool | None = None) -> list[RecordedRequest]:
        """Entries by method, ``re.search`` on the path, and watch or not (None: any)."""
        pattern = re.compile(path_regex) if path_regex else None
        return [r for r in self.snapshot()
                if (method is None or r.method == method.upper())
                and (pattern is None or pattern.search(r.path))
                and (watch is None or r.is_watch == watch)]

    def count(self, method: str | None = None, path_regex: str | None = None,
              watch: bool | None = None) -> int:
        return len(self.matching(method, path_regex, watch))
