"""Watch history and open watches: what a ``?watch=true`` stream is fed from.

Every change the store makes becomes one `Change`, numbered by the global
resourceVersion, kept in a bounded history and offered to every open watch.
Each `Watcher` filters changes by resource, namespace and selectors and turns
them into wire events the way the real watch cache does: an object that starts
matching a watch's selector arrives as ADDED, one that stops matching as
DELETED (its previous state, stamped with the new resourceVersion).

Threads: the store calls in here from whatever thread changes it (the server's
event loop, or a test's thread through the hooks), always holding its lock;
the wire events reach the stream's asyncio queue via ``call_soon_threadsafe``
so they keep the order of the resourceVersions.

What a client of kubernetes 37.0.2 sees when it watches from a resourceVersion
older than the kept history (after `FakeApiServer.compact`, or once more than
``history_limit`` changes were made): the server answers HTTP 200, sends one
``{"type": "ERROR", "object": <Status 410 Expired, "too old resource version:
X (Y)">}`` and closes the stream, as the real API server does.
``watch.Watch().stream()`` never yields that ERROR event. Without
``timeout_seconds`` it reconnects once, silently, from the same
resourceVersion; the second ERROR makes it raise
``kubernetes.client.exceptions.ApiException`` with ``status == 410`` and
``reason == "Expired: too old resource version: X (Y)"`` (``body`` is None).
With ``timeout_seconds`` it raises on the first ERROR (it never retries then).
The consumer must catch that, re-list, and watch from the list's
``metadata.resourceVersion``.

A stream that simply ends (``timeoutSeconds`` elapsed, or
`FakeApiServer.expire_watches`) is different: without ``timeout_seconds`` the
client reconnects from the last resourceVersion it saw (a consumer notices
nothing but a second request); with it, the generator just ends.

Watches of one resource can be made late (`WatchHub.delays`, set through
`FakeApiServer.delay_watch`): each event reaches the stream that many seconds
after the change, in order, as when the API server's watch cache of that
resource lags behind the others. Separate watches are separate streams in a
real cluster too, so a client may see a claim created after its owner was
scaled before it sees the scaling.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from .resources import ResourceType
from .selectors import FieldSelector, LabelSelector

#: Sent to a watcher's queue to end its stream.
CLOSE = None


@dataclass(frozen=True)
class Change:
    """One stored change. For DELETED, `new` is the last state with the deletion's RV."""

    rv: int
    type: str
    resource: tuple[str, str, str]
    old: dict[str, Any] | None
    new: dict[str, Any] | None


def wire(event_type: str, obj: dict[str, Any]) -> bytes:
    """One newline-terminated watch event as the API server frames it."""
    return orjson.dumps({"type": event_type, "object": obj}) + b"\n"


class Watcher:
    """One open watch stream: its filter and the queue its response reads."""

    def __init__(self, rt: ResourceType, namespace: str | None, labels: LabelSelector,
                 fields: FieldSelector, loop: asyncio.AbstractEventLoop | None) -> None:
        self.rt = rt
        self.namespace = namespace
        self.labels = labels
        self.fields = fields
        self.loop = loop
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._late: collections.deque[tuple[float, bytes | None]] = collections.deque()

    def matches(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        if self.namespace is not None and obj.get("metadata", {}).get("namespace") != self.namespace:
            return False
        return self.labels.matches(obj) and self.fields.matches(obj)

    def translate(self, change: Change) -> bytes | None:
        """The wire event this watch sees for `change`, or None if none."""
        if change.resource != self.rt.key:
            return None
        if change.type == "DELETED":
            return wire("DELETED", change.new) if change.new is not None and self.matches(change.new) else None
        was, now = self.matches(change.old), self.matches(change.new)
        if now and change.new is not None:
            return wire("MODIFIED" if was else "ADDED", change.new)
        if was and change.old is not None:
            gone = {**change.old, "metadata": {**change.old["metadata"], "resourceVersion": str(change.rv)}}
            return wire("DELETED", gone)
        return None

    def _put(self, item: bytes | None, delay: float = 0.0) -> None:
        if self.loop is None:
            self.queue.put_nowait(item)
            return
        try:
            if delay > 0 or self._late:
                self.loop.call_soon_threadsafe(self._put_late, item, delay)
            else:
                self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: the stream is gone already
            pass

    def _put_late(self, item: bytes | None, delay: float) -> None:
        """In the loop: hold ``item`` back ``delay`` seconds, behind every item held already."""
        assert self.loop is not None
        due = self.loop.time() + delay
        if self._late:
            due = max(due, self._late[-1][0])
        self._late.append((due, item))
        self.loop.call_at(due, self._release)

    def _release(self) -> None:
        """Pass on what is due (asyncio may call a little early: what is not due yet waits)."""
        assert self.loop is not None
        while self._late and self._late[0][0] <= self.loop.time():
            self.queue.put_nowait(self._late.popleft()[1])
        if self._late:
            self.loop.call_at(self._late[0][0], self._release)

    def offer(self, change: Change, delay: float = 0.0) -> None:
        if (event := self.translate(change)) is not None:
            self._put(event, delay)

    def close(self) -> None:
        self._put(CLOSE)


class TooOld(Exception):
    """The asked-for resourceVersion is older than the kept history."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(requested, oldest)
        self.requested = requested
        self.oldest = oldest


class WatchHub:
    """Bounded change history plus the set of open watchers.

    Not locked on its own: every method runs under the store's lock, which is
    what keeps "changes since RV X" and "register for later changes" atomic.
    """

    def __init__(self, history_limit: int) -> None:
        self.history: collections.deque[Change] = collections.deque()
        self.history_limit = history_limit
        #: Every change with rv > compacted_rv is still in `history`.
        self.compacted_rv = 0
        self.watchers: set[Watcher] = set()
        #: Seconds each change of a resource (by key) takes to reach open watches.
        self.delays: dict[tuple[str, str, str], float] = {}

    def publish(self, change: Change) -> None:
        self.history.append(change)
        while len(self.history) > self.history_limit:
            self.compacted_rv = self.history.popleft().rv
        delay = self.delays.get(change.resource, 0.0)
        for watcher in list(self.watchers):
            watcher.offer(change, delay)

    def since(self, rv: int) -> Iterable[Change]:
        """Changes after `rv`, or `TooOld` when some of them were forgotten."""
        if rv < self.compacted_rv:
            raise TooOld(rv, self.compacted_rv)
        return [c for c in self.history if c.rv > rv]

    def compact(self, current_rv: int) -> None:
        """Forget all history: resuming from any earlier RV now gets 410."""
        self.history.clear()
        self.compacted_rv = current_rv

    def close_all(self) -> int:
        watchers, self.watchers = list(self.watchers), set()
        for watcher in watchers:
            watcher.close()
        return len(watchers)
