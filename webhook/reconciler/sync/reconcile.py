"""One reconcile of one PodCliqueSet, as controller-runtime's ``Reconcile(key) -> Result``: observe
the cached PodCliqueSet and its current children as owners (as the pod webhook sees them), plan
each owner's actions from the caches (``plan``), apply them owner by owner (``Executor``). Once it
has written for ``budget`` seconds the executor stops between two chunks, so that one owner of a
million claims never holds a worker for long, and goes on from there next time unless an event in
between could have changed what it checked. One owner's failure never stops the others.
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.boundedcache import BoundedCache
from webhook.core.model.meta import ObjectKey, OwnerReference
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.sharing.desired import MAX_CLAIMS_PER_OWNER, DesiredClaim, claim_count
from webhook.core.sharing.owners import Owner, live_owners
from webhook.kube.api import EVENTS, NOT_FOUND, Objects, status_message
from webhook.reconciler.cluster import Caches, current_children
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.reconciler.sync import plan
from webhook.reconciler.sync.writes import FAILURES_KEPT, ClaimWrites, Interrupted, OwnerWork, Unreachable

log = logging.getLogger(__name__)

BUDGET = 1.0  # seconds a reconcile goes on writing before it yields to the PodCliqueSets waiting
CHUNK = 256  # claim positions planned, and their writes sent, at a time
WARNINGS_PER_OWNER = 5  # Warning Events per owner and reconcile, for distinct failures; the rest are counted
ORPHANS_REMEMBERED, MESSAGE_BUDGET = 4096, 900
_ACTIONS = ((plan.CLAIM_CREATED, "Created"), (plan.CLAIM_ADOPTED, "Adopted"), (plan.CLAIM_DELETED, "Deleted stale"))


@dataclass(slots=True)
class Outcome:
    """What one reconcile did; ``failed`` says whether the key must be retried."""

    created: int = 0
    adopted: int = 0
    deleted: int = 0
    writes: int = 0
    failures: list[str] = field(default_factory=list)
    failed: int = 0
    requeue_after: float = 0.0
    """Reconcile again after this many seconds though nothing failed (claims deleted a moment ago are
    re-created once their owners' deletions, if any, have reached the caches)."""
    retry_within: float | None = None  # whatever the backoff says: a missing template may appear
    partial: bool = False  # the budget ran out with work left: run again after the PodCliqueSets waiting

    def add(self, work: OwnerWork) -> None:
        self.created += len(work.created)
        self.adopted += len(work.adopted)
        self.deleted += len(work.deleted)
        self.writes += work.writes
        self.failed += work.failed
        self.failures += [f"{work.owner.name}: {f}" for f in work.failures[: max(FAILURES_KEPT - len(self.failures), 0)]]
        self.requeue_after = max(self.requeue_after, work.requeue_after)
        if work.retry_within is not None:
            self.retry_within = work.retry_within


@dataclass(slots=True)
class Observed:
    """One reconcile: what it works from (the caches' epoch of the PodCliqueSet when read), what it did."""

    key: ObjectKey
    epoch: int
    pcs: PodCliqueSet
    owners: list[Owner]
    outcome: Outcome = field(default_factory=Outcome)
    started: float = field(default_factory=time.monotonic)
    candidates: plan.StaleCandidates | None = None  # grouped when the first owner needs them


class Continuation(NamedTuple):
    """Where a reconcile that ran out of budget stopped: every claim of ``owner`` before
    ``position``, and every owner before it, was as desired at ``epoch``."""

    epoch: int
    owner: OwnerReference
    position: int


class PodCliqueSetReconciler:
    def __init__(self, api: client.ApiClient, caches: Caches, recorder: EventRecorder, metrics: ReconcilerMetrics,
                 stopping: threading.Event, pool: ThreadPoolExecutor, max_claims_per_owner: int = MAX_CLAIMS_PER_OWNER) -> None:
        self._caches = caches
        self._metrics = metrics
        self._stopping = stopping
        writes = ClaimWrites(api, caches, metrics, pool, self._check_stopping)
        self.executor = Executor(caches, writes, recorder, metrics, max_claims_per_owner)
        self._orphans: BoundedCache[str, bool] = BoundedCache(ORPHANS_REMEMBERED)

    def reconcile(self, key: ObjectKey) -> Outcome:
        observed = self.observe(key)
        return Outcome() if observed is None else self.executor.apply(observed)

    def observe(self, key: ObjectKey) -> Observed | None:
        """The PodCliqueSet and its owners as the caches have them; None when it needs nothing."""
        epoch = self._caches.epoch(key)
        pcs = self._caches.podcliqueset(key)
        if pcs is None or pcs.deleting:
            self._metrics.owners_over_limit(key, 0)
            if pcs is None:
                self._report_orphans(key)
            return None
        groups, cliques = current_children(pcs, self._caches.scaling_groups_of(key), self._caches.cliques_of(key))
        owners = live_owners(pcs, groups, cliques, on_error=lambda name, message: log.warning("%s/%s: %s", key.namespace, name, message))
        return Observed(key, epoch, pcs, owners)

    def _report_orphans(self, key: ObjectKey) -> None:
        """Scaling groups and PodCliques whose labels name a PodCliqueSet that does not exist: logged
        once each, at INFO when nothing will collect them (no controller), else at DEBUG."""
        children = [("PodCliqueScalingGroup", g.metadata) for g in self._caches.scaling_groups_of(key)]
        children += [("PodClique", c.metadata) for c in self._caches.cliques_of(key)]
        for kind, metadata in children:
            if metadata.uid in self._orphans:
                continue
            self._orphans.put(metadata.uid, True)
            collected = any(r.controller for r in metadata.owner_references)
            log.log(logging.DEBUG if collected else logging.INFO, "%s %s/%s names PodCliqueSet %s, which does not exist; ignored%s",
                    kind, metadata.namespace, metadata.name, key.name, " until the garbage collector removes it" if collected else "")

    def _check_stopping(self) -> None:
        if self._stopping.is_set():
            raise Interrupted()


class Executor:
    def __init__(self, caches: Caches, writes: ClaimWrites, recorder: EventRecorder, metrics: ReconcilerMetrics, limit: int) -> None:
        self._caches = caches
        self._writes = writes
        self._recorder = recorder
        self._metrics = metrics
        self._limit = limit
        self.budget = BUDGET
        self._continuations: dict[ObjectKey, Continuation] = {}

    def apply(self, observed: Observed) -> Outcome:
        """Every owner's plan applied, from where the last reconcile stopped if that still holds."""
        resumed = self._resume(observed)
        if resumed is None:
            self._report_owners(observed)
        first, position = resumed or (0, 0)
        for i in range(first, len(observed.owners)):
            owner = observed.owners[i]
            if owner.replicas >= 0 and self._owner(observed, owner, position if i == first else 0):
                break
        if resumed is not None:
            observed.outcome.partial = True  # went on from a continuation: one full pass to finish
        return observed.outcome

    def _resume(self, observed: Observed) -> tuple[int, int] | None:
        """(owner, claim position) to go on from, when nothing changed since the last stop."""
        stopped = self._continuations.pop(observed.key, None)
        if stopped is None or stopped.epoch != observed.epoch:
            return None
        found = next((i for i, owner in enumerate(observed.owners) if owner.reference == stopped.owner), None)
        return None if found is None else (found, stopped.position)

    def _owner(self, observed: Observed, owner: Owner, start: int) -> bool:
        """The owner's claims ensured from ``start``, then its stale ones deleted; True out of budget."""
        work = OwnerWork(owner)
        try:
            stopped = self._ensure(observed, work, start, min(claim_count(owner), self._limit))
            if stopped is None and work.complete:
                self._clean_up(observed, work)
        except Unreachable:
            raise
        except BaseException:
            self._report(observed.key.namespace, work)  # what was done before shutdown, or a bug
            raise
        self._report(observed.key.namespace, work)
        observed.outcome.add(work)
        if stopped is None:
            return False
        observed.outcome.partial = True
        if work.complete:
            self._continuations[observed.key] = Continuation(observed.epoch, owner.reference, stopped)
        return True

    def _ensure(self, observed: Observed, work: OwnerWork, start: int, stop: int) -> int | None:
        """Positions ``start`` to ``stop``, a chunk at a time; where to go on from when out of budget."""
        position = start
        while position < stop:
            end = min(position + CHUNK, stop)
            if not self._apply(observed, work, plan.claims(work.owner, observed.key.namespace, self._caches, position, end)):
                return None
            position = end
            wrote = observed.outcome.writes or work.writes  # a reconcile that wrote nothing yet goes on
            if position < stop and wrote and time.monotonic() - observed.started >= self.budget:
                return position
        return None

    def _apply(self, observed: Observed, work: OwnerWork, actions: list[plan.Action]) -> bool:
        """One chunk's actions: adoptions and reports first, then creates; False when writes failed,
        so that the owner's other claims wait for a retry."""
        created: list[DesiredClaim] = []
        recreated: list[plan.Recreate] = []
        for action in actions:
            if isinstance(action, plan.Create):
                created.append(action.claim)
            elif isinstance(action, plan.Recreate):
                recreated.append(action)
            elif isinstance(action, plan.Defer):
                work.complete = False
                work.requeue_after = max(work.requeue_after, action.seconds)
            else:
                self._writes.apply_to_existing(observed.key.namespace, work, action)
        if recreated:
            replicas = self._writes.owner_replicas(observed.key.namespace, work, recreated[0].claim.name, "cannot read the owner of ")
            needed = plan.still_needed(recreated, replicas)
            if len(needed) < len(recreated):
                work.complete = False  # the owner's cache is behind: its event is on its way
            created += needed
        return self._writes.create(observed.pcs, work, created)

    def _clean_up(self, observed: Observed, work: OwnerWork) -> None:
        """The owner's stale claims, deleted only once a read of the owner confirms that it still is
        their owner and that they are stale at its replicas now too."""
        if observed.candidates is None:
            observed.candidates = plan.StaleCandidates(self._caches.claims_of(observed.key))
        owner = work.owner
        deletes = plan.cleanup(owner, observed.candidates)
        if not deletes:
            return
        doing = f"cannot read {owner.level.kind} {owner.name} to delete "
        replicas = self._writes.owner_replicas(observed.key.namespace, work, deletes[0].claim.name, doing)
        if replicas is None:
            return  # gone, re-created, or unreadable: the owner's own event is on its way
        if replicas != owner.replicas:
            deletes = plan.cleanup(owner, observed.candidates, replicas)
        self._writes.delete(work, deletes)

    def _report(self, namespace: str, work: OwnerWork) -> None:
        """One Event per owner and action naming its claims, and one per distinct failure, a few per owner."""
        about = work.owner.reference
        for names, (reason, verb) in zip((work.created, work.adopted, work.deleted), _ACTIONS, strict=True):
            if names:
                self._recorder.record(namespace, about, "Normal", reason, event_message(verb, names))
        reported = dict.fromkeys((failure.reason, str(failure)) for failure in work.failures)
        for reason, message in list(reported)[:WARNINGS_PER_OWNER]:
            self._recorder.record(namespace, about, "Warning", reason, message)

    def _report_owners(self, observed: Observed) -> None:
        """Warnings about owners whose sharing cannot be reconciled in full, and the gauge of them."""
        over = 0
        for owner in observed.owners:
            for report in plan.owner_reports(owner, self._limit):
                over += report.reason == plan.LIMIT_EXCEEDED
                self._recorder.record(observed.key.namespace, owner.reference, "Warning", report.reason, report.message)
        self._metrics.owners_over_limit(observed.key, over)


def event_message(verb: str, names: list[str]) -> str:
    """``Created ResourceClaim a`` or ``Created 3 ResourceClaims: a, b, c``, naming as many claims
    as fit in an Event's message and counting the rest."""
    if len(names) == 1:
        return f"{verb} ResourceClaim {names[0]}"
    head = f"{verb} {len(names)} ResourceClaims: "
    shown: list[str] = []
    for name in names:
        if len(head) + sum(len(n) + 2 for n in shown) + len(name) > MESSAGE_BUDGET:
            break
        shown.append(name)
    rest = len(names) - len(shown)
    return head + ", ".join(shown) + (f" and {rest} more" if rest else "")


class EventRecorder:
    """Events about the owners of shared claims (``about``, in ``namespace``), through core v1: what
    ``kubectl describe`` reads, and events.k8s.io cannot read Events written so. Like client-go's
    recorder, a repeat of an Event on an object within ``window`` seconds raises the existing one's
    ``count``, so that a retry loop makes one Event, not a flood. Recording never raises: an Event
    is a report, and failing to write one must not fail the work it reports on."""

    def __init__(self, api: client.ApiClient, component: str, instance: str, window: float = 600.0, remembered: int = 4096) -> None:
        self._api = api
        self.component, self.instance = component, instance
        self._seen: BoundedCache[tuple[str, OwnerReference, str, str, str], tuple[str, int]] = BoundedCache(remembered, window)
        """The Event written for each, and how many times it happened."""

    def record(self, namespace: str, about: OwnerReference, event_type: str, reason: str, message: str) -> None:
        key = (namespace, about, event_type, reason, message)
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()  # metav1.Time: seconds
        events = Objects(self._api, EVENTS, namespace)
        name, count = self._seen.get(key) or ("", 0)
        try:
            if not (count and self._bump(events, name, count + 1, now)):
                created = events.create(self._event(namespace, about, event_type, reason, message, now))
                name, count = str(created["metadata"]["name"]), 0
        except ApiException as err:
            log.warning("cannot record event %s on %s %s/%s: %s", reason, about.kind, namespace, about.name, status_message(err))
            return
        except Exception as err:  # noqa: BLE001 - a report must never fail the work it reports on
            log.warning("cannot record event %s: %s", reason, err)
            return
        self._seen.put(key, (name, count + 1))

    @staticmethod
    def _bump(events: Objects, name: str, count: int, now: str) -> bool:
        """The Event's ``count`` raised; False if it is gone (expired)."""
        try:
            events.patch(name, {"count": count, "lastTimestamp": now})
        except ApiException as err:
            if err.status == NOT_FOUND:
                return False
            raise
        return True

    def _event(self, namespace: str, about: OwnerReference, event_type: str, reason: str, message: str, now: str) -> dict[str, Any]:
        involved = {"apiVersion": about.api_version, "kind": about.kind, "namespace": namespace, "name": about.name, "uid": about.uid}
        return {
            "apiVersion": EVENTS.api_version, "kind": EVENTS.kind,
            "metadata": {"name": f"{about.name}.{time.time_ns():x}", "namespace": namespace}, "involvedObject": involved,
            "type": event_type, "reason": reason, "message": message[:1024], "source": {"component": self.component},
            "reportingComponent": self.component, "reportingInstance": self.instance,
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
        }
