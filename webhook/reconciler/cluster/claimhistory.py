"""What happened to claims lately that the claim cache alone does not say.

``PendingWrites``: the claims this reconciler has just created, patched or deleted, until the watch
reports that very change (or for ``ttl`` seconds). A reconcile that runs in between reads the
written state, not the stale cache, and so does not create a claim twice or delete it again. A
write's response can reach the worker after the watch has already delivered the change (and even a
later one), so the changes the watch delivered are remembered for ``ttl`` seconds too: a write the
watch has already reported is not recorded as pending.

``RecentDeletions``: claims deleted by anyone in the last ``keep`` seconds. Such a claim is not
re-created within ``delay`` seconds (its deletion re-queues the PodCliqueSet after that delay, and
by then the caches have seen whether its owner is gone too), and until ``keep`` only when a read
of its owner says it is still needed (BEHAVIOUR.md §4.9).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

from webhook.core.boundedcache import BoundedCache
from webhook.core.model.meta import ObjectKey
from webhook.kube.informer import object_key
from webhook.reconciler.cluster.claimrecord import ClaimRecord

WRITES_KEPT = 1 << 17
"""Claim writes and watched changes remembered at most, each for its ``ttl``."""
DELETIONS_KEPT = 100_000


class _Written(NamedTuple):
    record: ClaimRecord
    deleted: bool


class PendingWrites:
    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._written: BoundedCache[ObjectKey, _Written] = BoundedCache(WRITES_KEPT, ttl, clock)
        self._observed: BoundedCache[tuple[ObjectKey, str], bool] = BoundedCache(WRITES_KEPT, ttl, clock)

    def wrote(self, record: ClaimRecord, deleted: bool = False) -> bool:
        """Remember a write; False when the watch has reported it already."""
        key = ObjectKey(record.namespace, record.name)
        if not deleted and (key, record.resource_version) in self._observed:
            return False
        self._written.put(key, _Written(record, deleted))
        return True

    def observe(self, kind: str, obj: dict[str, Any]) -> None:
        """The watch reported a change: forget our write once the watch has caught up with it."""
        key = object_key(obj)
        version = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        self._observed.put((key, version), True)
        written = self._written.get(key)
        if written is not None and (kind == "DELETED" or version == written.record.resource_version):
            self._written.discard(key)

    def resolve(self, key: ObjectKey, cached: ClaimRecord | None) -> ClaimRecord | None:
        """The claim as last written by us, or as cached once the cache is as new."""
        written = self._written.get(key)
        if written is None:
            return cached
        if written.deleted:
            if cached is not None and cached.uid == written.record.uid:
                return None  # our deletion is not in the cache yet
        elif cached is None or cached.resource_version != written.record.resource_version:
            return written.record
        self._written.discard(key)
        return cached


class RecentDeletions:
    def __init__(self, delay: float, keep: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._delay = delay
        self._clock = clock
        self._deleted_at: BoundedCache[ObjectKey, float] = BoundedCache(DELETIONS_KEPT, keep, clock)

    def observe(self, kind: str, obj: dict[str, Any]) -> None:
        if kind == "DELETED":
            self._deleted_at.put(object_key(obj), self._clock())

    def remaining(self, key: ObjectKey) -> float:
        """Seconds until a claim deleted recently may be re-created; 0 when it may be now."""
        at = self._deleted_at.get(key)
        return 0.0 if at is None else max(at + self._delay - self._clock(), 0.0)

    def recent(self, key: ObjectKey) -> bool:
        """Deleted within the last ``keep`` seconds."""
        return key in self._deleted_at
