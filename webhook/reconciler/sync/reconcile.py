"""One reconcile of one PodCliqueSet, as controller-runtime's ``Reconcile(key) -> Result``: observe,
plan, apply.

Observe: the cached PodCliqueSet and its current children, placed as owners (``live_owners``), the
same description of sharing the pod webhook injects from. Plan and apply: each owner's actions,
computed from the caches (``plan``), applied by the ``Executor``, which owns the time budget, the
continuation of a reconcile that ran out of it, the writes not yet seen and the Events. The result
(``Outcome``) says whether to retry or come back.

A PodCliqueSet that is gone or being deleted needs nothing: the garbage collector removes the
claims with their owners. Its children left behind are logged once each.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from kubernetes import client

from webhook.core.boundedcache import BoundedCache
from webhook.core.model.meta import ObjectKey
from webhook.core.sharing.desired import MAX_CLAIMS_PER_OWNER
from webhook.core.sharing.owners import live_owners
from webhook.reconciler.cluster.cache import Caches
from webhook.reconciler.cluster.children import current_children
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.reconciler.sync.claimapi import ClaimApi
from webhook.reconciler.sync.events import EventRecorder
from webhook.reconciler.sync.executor import Executor, Observed
from webhook.reconciler.sync.outcome import Interrupted, Outcome
from webhook.reconciler.sync.writes import ClaimWrites

log = logging.getLogger(__name__)

ORPHANS_REMEMBERED = 4096

__all__ = ["Interrupted", "Outcome", "PodCliqueSetReconciler"]


class PodCliqueSetReconciler:
    def __init__(
        self,
        api: client.ApiClient,
        caches: Caches,
        recorder: EventRecorder,
        metrics: ReconcilerMetrics,
        stopping: threading.Event,
        pool: ThreadPoolExecutor,
        max_claims_per_owner: int = MAX_CLAIMS_PER_OWNER,
    ) -> None:
        self._caches = caches
        self._metrics = metrics
        self._stopping = stopping
        writes = ClaimWrites(ClaimApi(api), caches, metrics, pool, self._check_stopping)
        self.executor = Executor(api, caches, writes, recorder, metrics, max_claims_per_owner)
        self._orphans: BoundedCache[str, bool] = BoundedCache(ORPHANS_REMEMBERED)

    def reconcile(self, key: ObjectKey) -> Outcome:
        observed = self.observe(key)
        return Outcome() if observed is None else self.executor.apply(observed)

    def observe(self, key: ObjectKey) -> Observed | None:
        """The PodCliqueSet and its owners as the caches have them; None when it needs nothing."""
        epoch = self._caches.epoch(key)
        pcs = self._caches.podcliqueset(key)
        if pcs is None or pcs.deleting:
            self._metrics.forget_owners(key)
            if pcs is None:
                self._report_orphans(key)
            return None
        groups, cliques = current_children(pcs, self._caches.scaling_groups_of(key), self._caches.cliques_of(key))
        owners = live_owners(pcs, groups, cliques, on_error=lambda name, message: log.warning("%s/%s: %s", key.namespace, name, message))
        return Observed(key, epoch, pcs, owners)

    def _report_orphans(self, key: ObjectKey) -> None:
        """Scaling groups and PodCliques whose labels name a PodCliqueSet that does not exist:
        logged once each, at INFO when nothing will collect them (no controller), else at DEBUG
        (the garbage collector is on its way)."""
        children = [("PodCliqueScalingGroup", g.metadata) for g in self._caches.scaling_groups_of(key)]
        children += [("PodClique", c.metadata) for c in self._caches.cliques_of(key)]
        for kind, metadata in children:
            if metadata.uid in self._orphans:
                continue
            self._orphans.put(metadata.uid, True)
            collected = any(r.controller for r in metadata.owner_references)
            log.log(
                logging.DEBUG if collected else logging.INFO,
                "%s %s/%s names PodCliqueSet %s, which does not exist; ignored%s",
                kind,
                metadata.namespace,
                metadata.name,
                key.name,
                " until the garbage collector removes it" if collected else "",
            )

    def _check_stopping(self) -> None:
        if self._stopping.is_set():
            raise Interrupted()
