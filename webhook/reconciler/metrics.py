"""The reconciler's Prometheus metrics, in a registry of its own (tests run several reconcilers in
one process), with the process's and Python's metrics and no ``*_created`` series
(``webhook.exposition``)."""

from __future__ import annotations

import threading
from collections.abc import Hashable

from prometheus_client import Counter, Gauge, Histogram

from webhook.exposition import new_registry

PREFIX = "grove_sharing_reconciler"


class ReconcilerMetrics:
    def __init__(self) -> None:
        self.registry = registry = new_registry()
        self.claim_writes = Counter(
            f"{PREFIX}_claim_writes",
            "ResourceClaims written, by action: created, adopted (controller reference set), "
            "labelled (labels merged on an owned claim), deleted (stale PerReplica claims).",
            ["action"], registry=registry,
        )
        self.reconciles = Counter(f"{PREFIX}_reconciles", "Reconciles of one PodCliqueSet, by result.", ["result"], registry=registry)
        for counter, labels in ((self.claim_writes, ("created", "adopted", "labelled", "deleted")), (self.reconciles, ("success", "error"))):
            for label in labels:
                counter.labels(label)
        self.reconcile_errors = Counter(
            f"{PREFIX}_reconcile_errors", "Reconciles that left some claim not as desired (retried with backoff).", registry=registry
        )
        self.duration = Histogram(
            f"{PREFIX}_reconcile_duration_seconds", "Time to reconcile one PodCliqueSet.",
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60), registry=registry,
        )
        self.queue_depth = Gauge(f"{PREFIX}_queue_depth", "PodCliqueSet keys ready to be reconciled.", registry=registry)
        self.queue_retrying = Gauge(f"{PREFIX}_queue_retrying", "PodCliqueSet keys waiting for their retry delay.", registry=registry)
        self.leader = Gauge(
            f"{PREFIX}_leader",
            "1 while this replica reconciles (holds the lease, or runs without leader election), else 0.", registry=registry,
        )
        self.caches_synced = Gauge(f"{PREFIX}_caches_synced", "1 once every informer has listed its objects.", registry=registry)
        self.over_limit = Gauge(
            f"{PREFIX}_owners_over_claim_limit",
            "Owners (PodCliqueSets, scaling groups, PodCliques) whose sharing needs more claims than "
            "--max-claims-per-owner: they have only the first ones.",
            registry=registry,
        )
        self._over_limit: dict[Hashable, int] = {}
        self._over_limit_lock = threading.Lock()
        self.over_limit.set_function(self._count_over_limit)
        self.podcliquesets = Gauge(
            f"{PREFIX}_podcliquesets",
            "PodCliqueSets with shared claims, by who makes their claims: reconciler, or grove-operator (the "
            "reconciler only watches and reports them; see --claims).",
            ["claims_made_by"], registry=registry,
        )
        self.cached = Gauge(
            f"{PREFIX}_cached_objects", "Objects in the reconciler's caches, by resource (its memory grows with them).",
            ["resource"], registry=registry,
        )

    def owners_over_limit(self, pcs: Hashable, count: int) -> None:
        """How many owners of one PodCliqueSet are over the limit now."""
        with self._over_limit_lock:
            if count:
                self._over_limit[pcs] = count
            else:
                self._over_limit.pop(pcs, None)

    def _count_over_limit(self) -> float:
        with self._over_limit_lock:
            return float(sum(self._over_limit.values()))
