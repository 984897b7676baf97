"""The reconciler's view of the cluster: PodCliqueSets, Grove's scaling groups and PodCliques, and
shared claims (``ClaimRecord``, no spec) cached by informers, found by PodCliqueSet, and read
through what this reconciler has just written and what was deleted lately.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar, cast

from cachetools import LRUCache, TTLCache

from webhook.core.model import labels as grove
from webhook.core.model.meta import ObjectKey, ObjectMeta, OwnerReference, controller_of
from webhook.core.model.podcliqueset import (
    PodClique, PodCliqueScalingGroup, PodCliqueSet, read_podclique, read_podcliqueset, read_scaling_group,
)
from webhook.core.sharing.makers import Maker, claim_maker
from webhook.core.sharing.placement import index_below
from webhook.kube.api import PODCLIQUES, PODCLIQUESCALINGGROUPS, PODCLIQUESETS, RESOURCECLAIMS, Resource
from webhook.kube.informer import Handler, Informer, Informers, object_key

T = TypeVar("T")
GROVE_MANAGED = f"{grove.MANAGED_BY}={grove.MANAGED_BY_GROVE}"
SHARED_CLAIMS = f"{grove.COMPONENT}={grove.COMPONENT_RESOURCE_CLAIM}"

DELETION_DELAY = 1.0
"""Seconds before a deleted scaling group, PodClique or claim re-queues its PodCliqueSet: most such
deletions are the garbage collector's, and as the watches are separate streams a claim's deletion
can arrive before its owner's, when a reconcile would re-create it. None needs a write at once."""
RECHECK_AFTER_DELETION = 30.0
"""Seconds during which a claim deleted by anyone is re-created only once a read of its owner says
it is needed: the owner's cache may lag behind the deletion (BEHAVIOUR.md §4.9)."""
WRITES_KEPT, DELETIONS_KEPT, SHARED_KEPT = 1 << 17, 100_000, 65536
"""Claim writes and watched changes, deletions, and shared tuples remembered at most."""

Notify = Callable[[ObjectKey, float], None]  # re-queue a PodCliqueSet after a delay in seconds

INDEX_LABELS = (grove.POD_INDEX, grove.PCSG_REPLICA_INDEX, grove.PCS_REPLICA_INDEX)
KEPT_LABELS = frozenset({*INDEX_LABELS, grove.MANAGED_BY, grove.PART_OF, grove.COMPONENT, grove.PCSG, grove.PODCLIQUE})
"""Every label key the reconciler reads (BEHAVIOUR.md §4.5); no other is merged or compared."""

Labels = tuple[tuple[str, str], ...]  # sorted (key, value) pairs

_SHARED: LRUCache[Hashable, Any] = LRUCache(SHARED_KEPT)
_SHARED_LOCK = threading.Lock()


def shared(value: T) -> T:
    """One copy of equal tuples: the claim cache may hold a great many claims, and those of one owner
    have the same labels but one and the same owners. Forgetting one costs sharing, not correctness."""
    with _SHARED_LOCK:
        return cast(T, _SHARED.setdefault(value, value))


def label_shape(labels: Mapping[str, str]) -> tuple[Labels, str | None, str | None]:
    """(the kept labels but the replica index, shared; the index label; its value)."""
    kept = {k: v for k, v in labels.items() if k in KEPT_LABELS}
    index = next((k for k in INDEX_LABELS if k in kept), None)
    value = kept.pop(index) if index is not None else None
    return shared(tuple(sorted(kept.items()))), index, value


class ClaimRecord:
    """What the reconciler keeps of a ResourceClaim: its identity, Grove's labels and its owners,
    in pieces the claims of one owner share, never its spec."""

    __slots__ = ("namespace", "name", "uid", "resource_version", "base_labels", "index_label", "index_value",
                 "references", "deleting")

    def __init__(
        self, namespace: str, name: str, uid: str, resource_version: str, labels: Mapping[str, str] | None = None,
        owner_references: Sequence[OwnerReference] = (), deleting: bool = False,
    ) -> None:
        self.namespace, self.name, self.uid, self.resource_version = namespace, name, uid, resource_version
        self.base_labels, self.index_label, self.index_value = label_shape(labels or {})
        self.references: tuple[OwnerReference, ...] = shared(tuple(shared(r) for r in owner_references))
        self.deleting = deleting
        """Deleted already, kept by a finalizer until its pods let go of it."""

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> ClaimRecord:
        metadata = obj.get("metadata") or {}
        labels = metadata.get("labels") or {}
        references = metadata.get("ownerReferences") or []
        if not isinstance(labels, dict) or not isinstance(references, list):
            raise ValueError("metadata.labels or metadata.ownerReferences is malformed")
        namespace, name, uid, version = (_text(metadata, m) for m in ("namespace", "name", "uid", "resourceVersion"))
        references = [OwnerReference.from_api(r) for r in references if isinstance(r, dict)]
        labels = {str(k): str(v) for k, v in labels.items()}
        return cls(namespace, name, uid, version, labels, references, bool(metadata.get("deletionTimestamp")))

    @property
    def labels(self) -> dict[str, str]:
        """Grove's labels on the claim (the only ones kept)."""
        result = dict(self.base_labels)
        if self.index_label is not None and self.index_value is not None:
            result[self.index_label] = self.index_value
        return result


def _text(metadata: Mapping[str, Any], member: str) -> str:
    return str(metadata.get(member) or "")


class PendingWrites:
    """The claims this reconciler has just written, until the watch reports that very change (or for
    ``ttl`` seconds), so that a reconcile in between does not write them again. The watch may report
    a write, and a later change, before the write's answer comes: what it reported is kept too."""

    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._written: TTLCache[ObjectKey, tuple[ClaimRecord, bool]] = TTLCache(WRITES_KEPT, ttl, clock)
        self._observed: TTLCache[tuple[ObjectKey, str], bool] = TTLCache(WRITES_KEPT, ttl, clock)
        self._lock = threading.Lock()

    def wrote(self, record: ClaimRecord, deleted: bool = False) -> bool:
        """Remember a write; False when the watch has reported it already."""
        key = ObjectKey(record.namespace, record.name)
        with self._lock:
            if not deleted and self._observed.get((key, record.resource_version)):
                return False
            self._written[key] = (record, deleted)
        return True

    def observe(self, kind: str, obj: dict[str, Any]) -> None:
        """The watch reported a change: our write is forgotten once the watch has caught up with it."""
        key = object_key(obj)
        version = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        with self._lock:
            self._observed[(key, version)] = True
            written = self._written.get(key)
            if written is not None and (kind == "DELETED" or version == written[0].resource_version):
                self._written.pop(key, None)

    def resolve(self, key: ObjectKey, cached: ClaimRecord | None) -> ClaimRecord | None:
        """The claim as we last wrote it, or as cached once the cache is as new."""
        with self._lock:
            record, deleted = self._written.get(key) or (None, False)
            if record is None:
                return cached
            if deleted:
                if cached is not None and cached.uid == record.uid:
                    return None  # our deletion is not in the cache yet
            elif cached is None or cached.resource_version != record.resource_version:
                return record
            self._written.pop(key, None)
        return cached


class RecentDeletions:
    """Claims deleted by anyone lately: not re-created within ``delay`` seconds (by when the caches
    have seen whether their owner is gone too), and until ``keep`` only once a read of their owner
    says they are still needed (BEHAVIOUR.md §4.9)."""

    def __init__(self, delay: float, keep: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._delay = delay
        self._clock = clock
        self._deleted_at: TTLCache[ObjectKey, float] = TTLCache(DELETIONS_KEPT, keep, clock)
        self._lock = threading.Lock()

    def observe(self, kind: str, obj: dict[str, Any]) -> None:
        if kind == "DELETED":
            with self._lock:
                self._deleted_at[object_key(obj)] = self._clock()

    def remaining(self, key: ObjectKey) -> float:
        """Seconds until the claim may be re-created."""
        with self._lock:
            at = self._deleted_at.get(key)
        return 0.0 if at is None else max(at + self._delay - self._clock(), 0.0)

    def recent(self, key: ObjectKey) -> bool:
        with self._lock:
            return self._deleted_at.get(key) is not None


class ClaimMakers:
    """Who made the claims seen, by PodCliqueSet and by namespace: what decides who makes a
    PodCliqueSet's claims (``makers.who_makes``). What a PodCliqueSet's claims said is kept while
    it lives, so that claims deleted at a scale-in, or by the garbage collector, undo no decision;
    what a namespace's said, for the process's life. Nothing is kept per claim."""

    def __init__(self) -> None:
        self._by_pcs: dict[ObjectKey, frozenset[Maker]] = {}
        self._by_namespace: dict[str, frozenset[Maker]] = {}
        self._lock = threading.Lock()

    def saw(self, pcs: ObjectKey, maker: Maker | None) -> None:
        if maker is None:
            return
        with self._lock:
            made = self._by_pcs.get(pcs, frozenset())
            if maker not in made:
                self._by_pcs[shared(pcs)] = made | {maker}
                self._by_namespace[pcs.namespace] = self._by_namespace.get(pcs.namespace, frozenset()) | {maker}

    def forget(self, pcs: ObjectKey) -> None:
        with self._lock:
            self._by_pcs.pop(pcs, None)

    def of(self, pcs: ObjectKey) -> frozenset[Maker]:
        with self._lock:
            return self._by_pcs.get(pcs, frozenset())

    def in_namespace(self, namespace: str) -> frozenset[Maker]:
        with self._lock:
            return self._by_namespace.get(namespace, frozenset())


def pcs_key_of(obj: Mapping[str, Any]) -> ObjectKey | None:
    """The PodCliqueSet an object belongs to: its ``part-of`` label, else a PodCliqueSet owner."""
    metadata = obj.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "")
    part_of = (metadata.get("labels") or {}).get(grove.PART_OF)
    if part_of:
        return ObjectKey(namespace, str(part_of))
    for reference in metadata.get("ownerReferences") or []:
        if reference.get("kind") == "PodCliqueSet" and str(reference.get("apiVersion", "")).startswith("grove.io/"):
            return ObjectKey(namespace, str(reference.get("name")))
    return None


class PartOfIndex:
    """The objects of each PodCliqueSet, and the PodCliqueSet of each object: a reconcile scans no
    namespace, and a deletion (even one a re-list finds) still maps to its PodCliqueSet."""

    def __init__(self) -> None:
        self._pcs_of: dict[ObjectKey, ObjectKey] = {}
        self._members: dict[ObjectKey, set[str]] = {}
        self._lock = threading.Lock()

    def update(self, key: ObjectKey, pcs: ObjectKey | None) -> ObjectKey | None:
        """Records where ``key`` belongs now (None: nowhere); where it belonged before, if elsewhere."""
        with self._lock:
            previous = self._pcs_of.get(key)
            if previous == pcs:
                return None
            if previous is not None:
                del self._pcs_of[key]
                self._members[previous].discard(key.name)
                if not self._members[previous]:
                    del self._members[previous]
            if pcs is not None:
                pcs = shared(pcs)  # one key for all its members, which may be a great many claims
                self._pcs_of[key] = pcs
                self._members.setdefault(pcs, set()).add(key.name)
            return previous

    def names(self, pcs: ObjectKey) -> list[str]:
        with self._lock:
            return list(self._members.get(pcs, ()))


class Caches:
    def __init__(self, api: Any, namespaces: Sequence[str], notify: Notify, pending_ttl: float = 30.0,
                 on_recovered: Callable[[], None] | None = None) -> None:
        self._notify = notify
        self.pending = PendingWrites(pending_ttl)
        self.recently_deleted = RecentDeletions(DELETION_DELAY, RECHECK_AFTER_DELETION)
        self.makers = ClaimMakers()
        self._epochs: dict[ObjectKey, int] = {}
        self._epoch_counter = itertools.count(1)
        self._groups_index, self._cliques_index, self._claims_index = PartOfIndex(), PartOfIndex(), PartOfIndex()

        def informers(resource: Resource, transform: Callable[[dict[str, Any]], T], handler: Handler,
                      selector: str | None = GROVE_MANAGED) -> Informers[T]:
            return Informers(resource, namespaces, lambda namespace: Informer(
                api, resource, namespace=namespace, label_selector=selector, transform=transform, handler=handler,
                on_recovered=on_recovered,
            ))

        self.podcliquesets = informers(PODCLIQUESETS, read_podcliqueset, self._on_pcs, None)
        self.scaling_groups = informers(PODCLIQUESCALINGGROUPS, read_scaling_group, partial(self._on_member, self._groups_index))
        self.cliques = informers(PODCLIQUES, read_podclique, partial(self._on_member, self._cliques_index))
        self.claims = informers(RESOURCECLAIMS, ClaimRecord.from_object, self._on_claim, SHARED_CLAIMS)
        self.informers: tuple[Informers[Any], ...] = (self.podcliquesets, self.scaling_groups, self.cliques, self.claims)

    def _on_claim(self, kind: str, obj: dict[str, Any]) -> None:
        self.pending.observe(kind, obj)
        self.recently_deleted.observe(kind, obj)
        pcs = pcs_key_of(obj)
        if kind != "DELETED" and pcs is not None:
            self.makers.saw(pcs, claim_maker(obj.get("metadata") or {}))
        self._on_member(self._claims_index, kind, obj, disturbed_by_adds=False)

    def _on_pcs(self, kind: str, obj: dict[str, Any]) -> None:
        key = object_key(obj)
        if kind == "DELETED":
            self._epochs.pop(key, None)
            self.makers.forget(key)
        else:
            self._epochs[key] = next(self._epoch_counter)
        self._notify(key, 0.0)

    def _disturb(self, pcs: ObjectKey) -> None:
        if pcs in self._epochs:  # else no such PodCliqueSet (yet): its ADDED sets the epoch
            self._epochs[pcs] = next(self._epoch_counter)

    def epoch(self, pcs: ObjectKey) -> int:
        """Changes (never back) with every event that could make an earlier check of its claims wrong."""
        return self._epochs.get(pcs, 0)

    def _on_member(self, index: PartOfIndex, kind: str, obj: dict[str, Any], disturbed_by_adds: bool = True) -> None:
        """Queues the PodCliqueSet of a scaling group, PodClique or claim (and the one it left)."""
        key = object_key(obj)
        if kind == "DELETED":
            pcs = index.update(key, None) or pcs_key_of(obj)
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

    def wrote(self, record: ClaimRecord, deleted: bool = False) -> None:
        """A created claim is indexed under its PodCliqueSet at once, so that a reconcile before its
        watch event (a scale-in right after a scale-out) finds it among the PodCliqueSet's claims."""
        if self.pending.wrote(record, deleted) and not deleted:
            part_of = dict(record.base_labels).get(grove.PART_OF)
            if part_of:
                self._claims_index.update(ObjectKey(record.namespace, record.name), ObjectKey(record.namespace, part_of))

    def created(self, record: ClaimRecord) -> None:
        """A claim this reconciler has just made: it has made the claims of its PodCliqueSet."""
        self.wrote(record)
        part_of = dict(record.base_labels).get(grove.PART_OF)
        if part_of:
            self.makers.saw(ObjectKey(record.namespace, part_of), Maker.RECONCILER)

    def start(self) -> None:
        for informer in self.informers:
            informer.start()

    def stop(self) -> None:
        for informer in self.informers:
            informer.stop()

    @property
    def synced(self) -> bool:
        return all(informer.synced for informer in self.informers)

    def pcs_keys(self) -> list[ObjectKey]:
        return sorted(p.key for p in self.podcliquesets.list())

    def podcliqueset(self, key: ObjectKey) -> PodCliqueSet | None:
        return self.podcliquesets.get(key.namespace, key.name)

    def scaling_groups_of(self, key: ObjectKey) -> list[PodCliqueScalingGroup]:
        return self._members(self.scaling_groups, self._groups_index, key)

    def cliques_of(self, key: ObjectKey) -> list[PodClique]:
        return self._members(self.cliques, self._cliques_index, key)

    def claims_of(self, key: ObjectKey) -> list[ClaimRecord]:
        """The claims labelled as this PodCliqueSet's, as last written or seen (in no order)."""
        found = (self.claim(key.namespace, name) for name in self._claims_index.names(key))
        return [claim for claim in found if claim is not None]

    def claim(self, namespace: str, name: str) -> ClaimRecord | None:
        return self.pending.resolve(ObjectKey(namespace, name), self.claims.get(namespace, name))

    @staticmethod
    def _members(informers: Informers[Any], index: PartOfIndex, key: ObjectKey) -> list[Any]:
        found = (informers.get(key.namespace, name) for name in sorted(index.names(key)))
        return [obj for obj in found if obj is not None]


def _controlled_by(metadata: ObjectMeta, uid: str) -> bool:
    controller = controller_of(metadata.owner_references)
    return controller is not None and controller.uid == uid


def _index_below(metadata: ObjectMeta, label: str, replicas: int | None) -> bool:
    return index_below(metadata.labels.get(label, ""), max(replicas or 0, 0))


def current_children(
    pcs: PodCliqueSet, groups: Iterable[PodCliqueScalingGroup], cliques: Iterable[PodClique]
) -> tuple[list[PodCliqueScalingGroup], list[PodClique]]:
    """The scaling groups and PodCliques whose parent (scaling group, else PodCliqueSet) is cached
    with the UID their controller reference names and has their replica index now, but for a
    scaling group being deleted and its PodCliques: ensuring the claims of others Grove deletes
    would re-create what the garbage collector has just taken."""
    live_groups = [
        g for g in groups
        if _controlled_by(g.metadata, pcs.uid) and not g.metadata.deletion_timestamp
        and _index_below(g.metadata, grove.PCS_REPLICA_INDEX, pcs.spec.replicas)
    ]
    by_name = {g.metadata.name: g for g in live_groups}
    return live_groups, [c for c in cliques if _current_clique(c.metadata, pcs, by_name)]


def _current_clique(metadata: ObjectMeta, pcs: PodCliqueSet, groups: dict[str, PodCliqueScalingGroup]) -> bool:
    group_name = metadata.labels.get(grove.PCSG)
    if group_name is None:
        return _controlled_by(metadata, pcs.uid) and _index_below(metadata, grove.PCS_REPLICA_INDEX, pcs.spec.replicas)
    group = groups.get(group_name)
    return (
        group is not None and _controlled_by(metadata, group.metadata.uid)
        and _index_below(metadata, grove.PCSG_REPLICA_INDEX, group.spec.replicas)
    )
