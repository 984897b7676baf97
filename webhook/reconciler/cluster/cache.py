"""The reconciler's view of the cluster: four informers, an index by PodCliqueSet, and the
claims it has written but not yet seen come back.

PodCliqueSets, scaling groups and PodCliques are kept as the core's read models (only names,
labels, UIDs, replicas and the sharing configuration); claims as ``ClaimRecord`` (no spec).
Scaling groups and PodCliques are listed with Grove's ``managed-by`` label, claims with the
``resource-claim`` component label, so nothing else in the cluster is cached.

Claims are read through what happened to them lately (``claimhistory``): a claim this
reconciler has just written is read as written until the watch reports that very change (or for
``pending_ttl`` seconds), and claims deleted lately are known as such.

Each PodCliqueSet has an epoch that changes with every event that could make an earlier check of
its claims wrong (any change to it or its children, a claim changed or deleted; a claim added
cannot): a reconcile that stopped half-way may go on from where it stopped while the epoch holds.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from webhook.core.model import labels
from webhook.core.model.children import PodClique, PodCliqueScalingGroup, read_podclique, read_scaling_group
from webhook.core.model.meta import ObjectKey
from webhook.core.model.podcliqueset import PodCliqueSet, read_podcliqueset
from webhook.kube.informer import Handler, Informer, object_key
from webhook.kube.informers import Informers
from webhook.kube.resources import (
    PODCLIQUES,
    PODCLIQUESCALINGGROUPS,
    PODCLIQUESETS,
    RESOURCECLAIMS,
    Resource,
)
from webhook.reconciler.cluster.claimhistory import PendingWrites, RecentDeletions
from webhook.reconciler.cluster.claimrecord import ClaimRecord
from webhook.reconciler.cluster.index import PartOfIndex, pcs_key_of

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

Notify = Callable[[ObjectKey, float], None]
"""Re-queue a PodCliqueSet after a delay in seconds (0: at once)."""


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
        self.recently_deleted = RecentDeletions(DELETION_DELAY, RECHECK_AFTER_DELETION)
        self._epochs: dict[ObjectKey, int] = {}
        self._epoch_counter = itertools.count(1)
        self._groups_index, self._cliques_index, self._claims_index = PartOfIndex(), PartOfIndex(), PartOfIndex()

        def informer(resource: Resource, transform: Callable[[dict[str, Any]], T], handler: Handler, selector: str | None = None) -> Informers[T]:
            return Informers(resource, namespaces, lambda namespace: Informer(
                api, resource, namespace=namespace, label_selector=selector, transform=transform, handler=handler,
                on_recovered=on_recovered,
            ))

        self.podcliquesets = informer(PODCLIQUESETS, read_podcliqueset, self._on_pcs)
        self.scaling_groups = informer(
            PODCLIQUESCALINGGROUPS, read_scaling_group, self._member_handler(self._groups_index), GROVE_MANAGED
        )
        self.cliques = informer(PODCLIQUES, read_podclique, self._member_handler(self._cliques_index), GROVE_MANAGED)
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

    def _disturb(self, pcs: ObjectKey) -> None:
        if pcs in self._epochs:  # else no such PodCliqueSet (yet): its ADDED sets the epoch
            self._epochs[pcs] = next(self._epoch_counter)

    def epoch(self, pcs: ObjectKey) -> int:
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
                self._claims_index.update(ObjectKey(record.namespace, record.name), ObjectKey(record.namespace, part_of))

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
        found = (self.claim(key[0], name) for name in self._claims_index.names(key, ordered=False))
        return [claim for claim in found if claim is not None]

    def claim(self, namespace: str, name: str) -> ClaimRecord | None:
        return self.pending.resolve(ObjectKey(namespace, name), self.claims.get(namespace, name))

    @staticmethod
    def _members(informer: Informers[Any], index: PartOfIndex, key: ObjectKey) -> list[Any]:
        found = (informer.get(key[0], name) for name in index.names(key))
        return [obj for obj in found if obj is not None]
