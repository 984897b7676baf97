"""The reconciler's view of the cluster: four informers, an index by PodCliqueSet, and the
claims it has written but not yet seen come back.

PodCliqueSets, scaling groups and PodCliques are kept as the core's read models (only names,
labels, UIDs, replicas and the sharing configuration); claims as ``ClaimRecord`` (no spec).
Scaling groups and PodCliques are listed with Grove's ``managed-by`` label, claims with the
``resource-claim`` component label, so nothing else in the cluster is cached.

A claim this reconciler has just created, patched or deleted is remembered until the watch
reports that very change (or for ``pending_ttl`` seconds): a reconcile that runs in between reads
the written state, not the stale cache, and so does not create it twice or delete it again.

Each PodCliqueSet has an epoch that changes with every event that could make an earlier check of
its claims wrong (any change to it or its children, a claim changed or deleted; a claim added
cannot): a reconcile that stopped half-way may go on from where it stopped while the epoch holds.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from webhook.core.model import labels
from webhook.core.model.podcliqueset import (
    PodClique,
    PodCliqueScalingGroup,
    PodCliqueSet,
)
from webhook.kube.informer import Handler, Informer, object_key
from webhook.kube.informers import Informers
from webhook.kube.resources import (
    PODCLIQUES,
    PODCLIQUESCALINGGROUPS,
    PODCLIQUESETS,
    RESOURCECLAIMS,
    Resource,
)
from webhook.reconciler.cluster.claimrecord import ClaimRecord
from webhook.reconciler.cluster.index import ObjectKey, PartOfIndex, PcsKey, pcs_key_of

T = TypeVar("T")
GROVE_MANAGED = f"{labels.MANAGED_BY}={labels.MANAGED_BY_GROVE}"
SHARED_CLAIMS = f"{labels.COMPONENT}={labels.COMPONENT_RESOURCE_CLAIM}"

DELETION_DELAY = 1.0
"""Seconds before a deleted scaling group, PodClique or claim re-queues its PodCliqueSet. No such
deletion needs a write at once: the garbage collector removes a deleted owner's claims, and a
claim deleted by hand can wait a second. Most of these deletions are the collector's, following a
scale-in or the deletion of the PodCliqueSet; the watches are separate streams, so a claim's
deletion can arrive before its owner's deletion (or before the owner's parent's scale-in), and a
reconcile at that moment would re-create the claim for an owner that is already gone."""

RECHECK_AFTER_DELETION = 30.0
"""Seconds during which a claim deleted by anyone is re-created only once a read of its owner
says it is needed: the owner's cache may lag behind the deletion (BEHAVIOUR.md §4.9)."""
DELETIONS_KEPT = 100_000

Notify = Callable[[PcsKey, float], None]
"""Re-queue a PodCliqueSet after a delay in seconds (0: at once)."""


@dataclass(frozen=True, slots=True)
class _Pending:
    record: ClaimRecord
    deleted: bool
    expires: float


class PendingWrites:
    """Our own claim writes, until the claim cache has caught up with them.

    A write's response can reach the worker after the watch has already delivered the change (and
    even a later one), so the changes the watch delivered are remembered for ``ttl`` seconds too: a
    write the watch has already reported is not recorded as pending.
    """

    def __init__(self, ttl: float) -> None:
        self._ttl = ttl
        self._entries: dict[ObjectKey, _Pending] = {}
        self._observed: OrderedDict[tuple[ObjectKey, str], float] = OrderedDict()
        self._lock = threading.Lock()

    def wrote(self, record: ClaimRecord, deleted: bool = False) -> bool:
        """Remember a write; False when the watch has reported it already."""
        key = (record.namespace, record.name)
        with self._lock:
            if not deleted and (key, record.resource_version) in self._observed:
                return False
            self._entries[key] = _Pending(record, deleted, time.monotonic() + self._ttl)
            return True

    def observe(self, kind: str, obj: dict[str, Any]) -> None:
        """The watch reported a change: forget our write once the watch has caught up with it."""
        key = object_key(obj)
        version = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        now = time.monotonic()
        with self._lock:
            self._observed[(key, version)] = now
            while self._observed and next(iter(self._observed.values())) < now - self._ttl:
                self._observed.popitem(last=False)
            entry = self._entries.get(key)
            if entry is not None and (kind == "DELETED" or version == entry.record.resource_version):
                del self._entries[key]

    def resolve(self, key: ObjectKey, cached: ClaimRecord | None) -> ClaimRecord | None:
        """The claim as last written by us, or as cached once the cache is as new."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return cached
            if entry.expires < time.monotonic():
                del self._entries[key]
                return cached
            if entry.deleted:
                if cached is not None and cached.uid == entry.record.uid:
                    return None  # our deletion is not in the cache yet
            elif cached is None or cached.resource_version != entry.record.resource_version:
                return entry.record
            del self._entries[key]
            return cached


class RecentDeletions:
    """Claims deleted within the last ``keep`` seconds, by anyone (at most ``DELETIONS_KEPT``).

    Such a claim is not re-created within ``delay`` seconds: its deletion re-queues the
    PodCliqueSet after the delay, and by then the caches have seen whether its owner is gone too.
    """

    def __init__(self, delay: float, keep: float = RECHECK_AFTER_DELETION) -> None:
        self._delay, self._keep = delay, keep
        self._at: OrderedDict[ObjectKey, float] = OrderedDict()
        self._lock = threading.Lock()

    def observe(self, kind: str, obj: dict[str, Any]) -> None:
        if kind != "DELETED":
            return
        now = time.monotonic()
        with self._lock:
            key = object_key(obj)
            self._at.pop(key, None)
            self._at[key] = now
            while self._at and (len(self._at) > DELETIONS_KEPT or next(iter(self._at.values())) < now - self._keep):
                self._at.popitem(last=False)

    def remaining(self, key: ObjectKey) -> float:
        """Seconds until a claim deleted recently may be re-created; 0 when it may be now."""
        with self._lock:
            at = self._at.get(key)
        return 0.0 if at is None else max(at + self._delay - time.monotonic(), 0.0)

    def recent(self, key: ObjectKey) -> bool:
        """Deleted within the last ``keep`` seconds."""
        with self._lock:
            at = self._at.get(key)
        return at is not None and at >= time.monotonic() - self._keep


class Caches:
    def __init__(
        self,
        api: Any,
        namespaces: Sequence[str],
        notify: Notify,
        pending_ttl: float = 30.0,
        on_recovered: Callable[[], None] | None = None,
    ) -> None:
        self._notify = notify
        self.pending = PendingWrites(pending_ttl)
        self.recently_deleted = RecentDeletions(DELETION_DELAY)
        self._epochs: dict[PcsKey, int] = {}
        self._epoch_counter = itertools.count(1)
        self._groups_index, self._cliques_index, self._claims_index = PartOfIndex(), PartOfIndex(), PartOfIndex()

        def informer(resource: Resource, transform: Callable[[dict[str, Any]], T], handler: Handler, selector: str | None = None) -> Informers[T]:
            return Informers(resource, namespaces, lambda namespace: Informer(
                api, resource, namespace=namespace, label_selector=selector, transform=transform, handler=handler,
                on_recovered=on_recovered,
            ))

        self.podcliquesets = informer(PODCLIQUESETS, PodCliqueSet.model_validate, self._on_pcs)
        self.scaling_groups = informer(
            PODCLIQUESCALINGGROUPS, PodCliqueScalingGroup.model_validate, self._member_handler(self._groups_index), GROVE_MANAGED
        )
        self.cliques = informer(PODCLIQUES, PodClique.model_validate, self._member_handler(self._cliques_index), GROVE_MANAGED)
        claims_handler = self._member_handler(self._claims_index, self._observe_claim, disturbed_by_adds=False)
        self.claims = informer(RESOURCECLAIMS, ClaimRecord.from_object, claims_handler, SHARED_CLAIMS)
        self.informers: tuple[Informers[Any], ...] = (self.podcliquesets, self.scaling_groups, self.cliques, self.claims)

    # --- events ----------------------------------------------------------------------------------

    def _observe_claim(self, kind: str, obj: dict[str, Any]) -> None:
        self.pending.observe(kind, obj)
        self.recently_deleted.observe(kind, obj)

    def _on_pcs(self, kind: str, obj: dict[str, Any]) -> None:
        key = object_key(obj)
        if kind == "DELETED":
            self._epochs.pop(key, None)
        else:
            self._epochs[key] = next(self._epoch_counter)
        self._notify(key, 0.0)

    def _disturb(self, pcs: PcsKey) -> None:
        if pcs in self._epochs:  # else no such PodCliqueSet (yet): its ADDED sets the epoch
            self._epochs[pcs] = next(self._epoch_counter)

    def epoch(self, pcs: PcsKey) -> int:
        """Changes whenever an event could have made an earlier check of this PodCliqueSet's claims
        wrong; never comes back to an earlier value."""
        return self._epochs.get(pcs, 0)

    def _member_handler(
        self,
        index: PartOfIndex,
        observe: Callable[[str, dict[str, Any]], None] | None = None,
        disturbed_by_adds: bool = True,
    ) -> Callable[[str, dict[str, Any]], None]:
        def handle(kind: str, obj: dict[str, Any]) -> None:
            if observe is not None:
                observe(kind, obj)
            key = object_key(obj)
            if kind == "DELETED":
                pcs = index.remove(key) or pcs_key_of(obj)
                if pcs is not None:
                    self._disturb(pcs)
                    self._notify(pcs, DELETION_DELAY)
                return
            pcs = pcs_key_of(obj)
            previous = index.update(key, pcs)
            if previous is not None:
                self._disturb(previous)
                self._notify(previous, 0.0)
            if pcs is not None:
                if disturbed_by_adds or kind != "ADDED":
                    self._disturb(pcs)
                self._notify(pcs, 0.0)

        return handle

    def wrote(self, record: ClaimRecord, deleted: bool = False) -> None:
        """A claim this reconciler has just written. A created claim is indexed under its
        PodCliqueSet at once, so that a reconcile before its watch event (a scale-in right
        after a scale-out) finds it among the PodCliqueSet's claims, stale ones included."""
        if self.pending.wrote(record, deleted) and not deleted:
            part_of = dict(record.base_labels).get(labels.PART_OF)
            if part_of:
                self._claims_index.update((record.namespace, record.name), (record.namespace, part_of))

    # --- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        for informer in self.informers:
            informer.start()

    def stop(self) -> None:
        for informer in self.informers:
            informer.stop()

    @property
    def synced(self) -> bool:
        return all(informer.synced for informer in self.informers)

    # --- reading ---------------------------------------------------------------------------------

    def pcs_keys(self) -> list[PcsKey]:
        return sorted((p.metadata.namespace, p.metadata.name) for p in self.podcliquesets.list())

    def podcliqueset(self, key: PcsKey) -> PodCliqueSet | None:
        return self.podcliquesets.get(*key)

    def scaling_groups_of(self, key: PcsKey) -> list[PodCliqueScalingGroup]:
        return self._members(self.scaling_groups, self._groups_index, key)

    def cliques_of(self, key: PcsKey) -> list[PodClique]:
        return self._members(self.cliques, self._cliques_index, key)

    def claims_of(self, key: PcsKey) -> list[ClaimRecord]:
        """The claims labelled as this PodCliqueSet's, as last written or seen (in no order)."""
        found = (self.claim(key[0], name) for name in self._claims_index.names(key, ordered=False))
        return [claim for claim in found if claim is not None]

    def claim(self, namespace: str, name: str) -> ClaimRecord | None:
        return self.pending.resolve((namespace, name), self.claims.get(namespace, name))

    @staticmethod
    def _members(informer: Informers[Any], index: PartOfIndex, key: PcsKey) -> list[Any]:
        found = (informer.get(key[0], name) for name in index.names(key))
        return [obj for obj in found if obj is not None]
