"""What happened to claims lately that the claim cache does not say yet: the writes this
reconciler made and the watch has not reported (pending writes), and the claims anyone deleted in
the last seconds (recent deletions)."""

from __future__ import annotations

from typing import Any

from webhook.core.model.meta import ObjectKey
from webhook.reconciler.cluster import ClaimRecord, PendingWrites, RecentDeletions

KEY = ObjectKey("default", "solo-all-gpu")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def record(version: str, uid: str = "uid-1") -> ClaimRecord:
    return ClaimRecord("default", "solo-all-gpu", uid, version)


def event(version: str, uid: str = "uid-1") -> dict[str, Any]:
    return {"metadata": {"namespace": "default", "name": "solo-all-gpu", "uid": uid, "resourceVersion": version}}


def test_pending_writes_are_read_as_written_until_the_watch_reports_them() -> None:
    pending = PendingWrites(ttl=30.0)
    written = record("2")
    assert pending.wrote(written)
    assert pending.resolve(KEY, None) is written  # created, not in the cache yet
    assert pending.resolve(KEY, record("1")) is written  # patched, the cache still has the old one
    pending.observe("MODIFIED", event("2"))
    cached = record("2")
    assert pending.resolve(KEY, cached) is cached


def test_pending_writes_the_watch_reported_first_are_not_recorded() -> None:
    """The response of a write can reach the worker after the watch delivered the change, and even
    a later one: the write is not pending then, and the newer cached claim is read."""
    pending = PendingWrites(ttl=30.0)
    pending.observe("MODIFIED", event("2"))
    pending.observe("MODIFIED", event("3"))
    assert not pending.wrote(record("2"))
    newer = record("3")
    assert pending.resolve(KEY, newer) is newer


def test_pending_deletions_hide_the_claim_until_the_watch_reports_them() -> None:
    pending = PendingWrites(ttl=30.0)
    pending.wrote(record("2"), deleted=True)
    assert pending.resolve(KEY, record("2")) is None
    recreated = record("5", uid="uid-2")
    assert pending.resolve(KEY, recreated) is recreated  # another claim of that name: not ours to hide
    pending.wrote(record("2"), deleted=True)
    pending.observe("DELETED", event("2"))
    assert pending.resolve(KEY, None) is None


def test_pending_writes_are_forgotten_after_their_time_to_live() -> None:
    clock = Clock()
    pending = PendingWrites(ttl=30.0, clock=clock)
    pending.wrote(record("2"))
    clock.now += 31
    stale = record("1")
    assert pending.resolve(KEY, stale) is stale


def test_recent_deletions_first_defer_then_ask_for_a_recheck_then_are_forgotten() -> None:
    clock = Clock()
    deletions = RecentDeletions(delay=1.0, keep=30.0, clock=clock)
    deletions.observe("MODIFIED", event("2"))
    assert (deletions.remaining(KEY), deletions.recent(KEY)) == (0.0, False)
    deletions.observe("DELETED", event("3"))
    assert (deletions.remaining(KEY), deletions.recent(KEY)) == (1.0, True)
    clock.now += 5
    assert (deletions.remaining(KEY), deletions.recent(KEY)) == (0.0, True)
    clock.now += 30
    assert (deletions.remaining(KEY), deletions.recent(KEY)) == (0.0, False)
