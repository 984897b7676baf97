"""One reconcile of one PodCliqueSet, as controller-runtime's ``Reconcile(key) -> Result``: observe
the cached PodCliqueSet and its current children as owners (as the pod webhook sees them), plan
each owner's actions from the caches (``plan``), apply them owner by owner (``apply``) with the
claim writes and owner reads they ask for (``ClaimWrites``). Once it has written for ``budget``
seconds the reconcile stops between two chunks, so that one owner of a million claims never holds a
worker for long, and goes on from there next time unless an event in between could have changed
what it checked. One owner's failure never stops the others.
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple, TypeVar

from cachetools import LRUCache, TTLCache
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.model.meta import ObjectKey, OwnerReference
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.sharing.desired import DesiredClaim, claim_count
from webhook.core.sharing.makers import RECONCILER_MANAGER, ClaimMaking, Evidence, Maker, Wait, who_makes
from webhook.core.sharing.owners import Owner, live_owners
from webhook.kube.api import (
    CONFLICT, EVENTS, NOT_FOUND, PODCLIQUES, PODCLIQUESCALINGGROUPS, PODCLIQUESETS, RESOURCECLAIMS, Obj, Objects,
    connection_problem, is_connection_error, status_message,
)
from webhook.kube.templates import TemplateError, TemplateReads
from webhook.reconciler.cluster import Caches, ClaimRecord, current_children
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.reconciler.sync import plan

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")
BUDGET = 1.0  # seconds a reconcile goes on writing before it yields to the PodCliqueSets waiting
CHUNK = 256  # claim positions planned, and their writes sent, at a time
WARNINGS_PER_OWNER = 5  # Warning Events per owner and reconcile, for distinct failures; the rest are counted
ORPHANS_REMEMBERED, MESSAGE_BUDGET = 4096, 900
_ACTIONS = ((plan.CLAIM_CREATED, "Created"), (plan.CLAIM_ADOPTED, "Adopted"), (plan.CLAIM_DELETED, "Deleted stale"))
LIMIT = 8
"""Largest batch, and the writes in flight at once in the whole process (the pool's size)."""
TEMPLATE_RETRY = 5.0
"""Seconds within which a claim waiting for a missing template is tried again."""
FAILURES_KEPT = 20  # failure messages kept per owner; the rest are counted
MISSING_AFTER = 30.0
"""Seconds a claim Grove's operator makes may be missing before a Warning Event says so: Grove makes
a new owner's claims within a second, but a scale-out of thousands takes it a while."""
OWNERS = {r.kind: r for r in (PODCLIQUESETS, PODCLIQUESCALINGGROUPS, PODCLIQUES)}


class Interrupted(Exception):
    """Shutdown or a lost lease: stop before the next write (the one under way has finished)."""


class Unreachable(Exception):
    """The API server did not answer: the reconcile stops and is retried, with no Event (none could be written)."""


class OwnerFailure(Exception):
    """One claim of one owner could not be made as desired; reported on the owner."""

    def __init__(self, message: str, reason: str = plan.SYNC_FAILED) -> None:
        super().__init__(message)
        self.reason = reason


def api_failure(err: Exception, claim: str, verb: str = "") -> OwnerFailure:
    """The failure an exception of a claim write or read means, or ``Unreachable`` raised."""
    if is_connection_error(err):
        raise Unreachable(connection_problem(err)) from None
    if isinstance(err, ApiException):
        return OwnerFailure(f'{verb}RC "{claim}": {status_message(err)}')
    raise err


@dataclass(slots=True)
class OwnerWork:
    """What one owner's part of a reconcile did."""

    owner: Owner
    created: list[str] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    writes: int = 0
    failures: list[OwnerFailure] = field(default_factory=list)
    failed: int = 0
    complete: bool = True
    """Every claim of the owner up to the limit is as desired, so that cleanup may follow."""
    retry_within: float | None = None
    requeue_after: float = 0.0
    live: tuple[int | None] | None = None
    """The owner's replicas as the API server had them during this reconcile, once read."""

    def fail(self, failure: OwnerFailure) -> None:
        self.complete = False
        self.failed += 1
        if len(self.failures) < FAILURES_KEPT:
            self.failures.append(failure)


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
                 stopping: threading.Event, max_claims_per_owner: int, claims: ClaimMaking, grace: float) -> None:
        self._caches = caches
        self._setting, self._grace = claims, grace
        self._makers: dict[ObjectKey, Maker] = {}
        """Who makes each PodCliqueSet's claims, as last decided (none while waiting)."""
        self._waiting: dict[ObjectKey, tuple[str, float]] = {}
        """(UID, since when) the reconciler has found each PodCliqueSet with claims to have."""
        self._missing_since: dict[ObjectKey, float] = {}
        """Since when claims Grove's operator makes have been missing, for each PodCliqueSet."""
        self._makers_lock = threading.Lock()
        for maker in Maker:
            metrics.podcliquesets.labels(maker.value).set_function(partial(self._count, maker))
        self.pool = ThreadPoolExecutor(max_workers=LIMIT, thread_name_prefix="claim-write")
        self._writes = ClaimWrites(api, caches, metrics, self.pool, stopping)
        self._recorder = recorder
        self._metrics = metrics
        self._limit = max_claims_per_owner
        self.budget = BUDGET
        self._continuations: dict[ObjectKey, Continuation] = {}
        self._orphans: LRUCache[str, bool] = LRUCache(ORPHANS_REMEMBERED)
        self._orphans_lock = threading.Lock()

    def reconcile(self, key: ObjectKey) -> Outcome:
        observed = self.observe(key)
        if observed is None:
            self._forget(key)
            return Outcome()
        maker = self._who_makes(observed)
        if isinstance(maker, Wait):
            return Outcome(requeue_after=maker.seconds)
        return self.apply(observed) if maker is Maker.RECONCILER else self.watch(observed)

    def _who_makes(self, observed: Observed) -> Maker | Wait:
        """Who makes the PodCliqueSet's claims (``makers.who_makes``), announced when it changes."""
        key, now = observed.key, time.monotonic()
        if not any(owner.entries for owner in observed.owners):
            return Maker.RECONCILER  # no claims to make: the owners' checks alone
        with self._makers_lock:
            uid, since = self._waiting.get(key) or ("", now)
            if uid != observed.pcs.uid:
                since = now
                self._waiting[key] = (observed.pcs.uid, since)
        makers = self._caches.makers
        maker = who_makes(self._setting, Evidence(makers.of(key), makers.in_namespace(key.namespace), now - since), self._grace)
        if isinstance(maker, Maker):
            with self._makers_lock:
                before = self._makers.get(key)
                self._makers[key] = maker
            if maker is not before:
                self._announce(observed, maker)
        return maker

    def _announce(self, observed: Observed, maker: Maker) -> None:
        """A log line when the maker of a PodCliqueSet's claims is decided or changes; a Normal Event
        on it when the reconciler steps back."""
        key = observed.key
        if maker is Maker.RECONCILER:
            log.debug("PodCliqueSet %s/%s: the reconciler makes its claims (--claims %s)", *key, self._setting)
            return
        message = f"Grove's operator makes the ResourceClaims of this PodCliqueSet: the reconciler creates, changes and deletes none of them (--claims {self._setting})"
        log.info("PodCliqueSet %s/%s: %s", *key, message)
        self._recorder.record(key.namespace, OwnerReference.controlling("PodCliqueSet", key.name, observed.pcs.uid),
                              "Normal", plan.MADE_BY_GROVE, message)

    def _forget(self, key: ObjectKey) -> None:
        with self._makers_lock:
            self._makers.pop(key, None)
            self._waiting.pop(key, None)
            self._missing_since.pop(key, None)

    def _count(self, maker: Maker) -> float:
        with self._makers_lock:
            return float(sum(m is maker for m in self._makers.values()))

    def watch(self, observed: Observed) -> Outcome:
        """Where Grove's operator makes the claims: nothing is written, and claims missing for
        ``MISSING_AFTER`` seconds are reported on their owners, then every ``MISSING_AFTER``."""
        key = observed.key
        self._continuations.pop(key, None)
        missing = [(owner, names) for owner in observed.owners
                   if owner.replicas >= 0 and (names := plan.missing(owner, key.namespace, self._caches, self._limit))]
        now = time.monotonic()
        with self._makers_lock:
            if not missing:
                self._missing_since.pop(key, None)
                return Outcome()
            since = self._missing_since.setdefault(key, now)
        if now - since < MISSING_AFTER:
            return Outcome(requeue_after=since + MISSING_AFTER - now)
        for owner, names in missing:
            message = (f"{event_message('Missing', names)} for {MISSING_AFTER:g} s or more: Grove's operator makes the claims of "
                       f"this PodCliqueSet, and the reconciler makes none of them (--claims {self._setting})")
            self._recorder.record(key.namespace, owner.reference, "Warning", plan.CLAIM_MISSING, message)
        return Outcome(requeue_after=MISSING_AFTER)

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
            with self._orphans_lock:
                if self._orphans.get(metadata.uid):
                    continue
                self._orphans[metadata.uid] = True
            collected = any(r.controller for r in metadata.owner_references)
            log.log(logging.DEBUG if collected else logging.INFO, "%s %s/%s names PodCliqueSet %s, which does not exist; ignored%s",
                    kind, metadata.namespace, metadata.name, key.name, " until the garbage collector removes it" if collected else "")

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
        replicas = self._writes.owner_replicas(observed.key.namespace, work, deletes[0].name, doing)
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


def slow_start(
    pool: ThreadPoolExecutor, items: Sequence[T], call: Callable[[T], R], before_batch: Callable[[], None]
) -> Iterator[tuple[T, R | Exception]]:
    """``(item, result or exception)`` for each item written, none after a batch in which one raised:
    as client-go's controllers do, so that many claims cost neither as many round trips nor a burst
    of failures when something is wrong."""
    start, size = 0, 1
    while start < len(items):
        before_batch()
        batch = items[start : start + size]
        futures = [pool.submit(call, item) for item in batch]
        failed = False
        for item, future in zip(batch, futures, strict=True):
            try:
                yield item, future.result()
            except Exception as err:  # noqa: BLE001 - handed to the caller, which knows what it means
                failed = True
                yield item, err
        if failed:
            return
        start, size = start + size, min(size * 2, LIMIT)


def claim_body(namespace: str, desired: DesiredClaim, spec: dict[str, Any]) -> dict[str, Any]:
    """The claim Grove would create: labels §4.5, one controller reference §4.6, the template's spec
    verbatim and nothing else (template metadata is not copied, §6.4)."""
    metadata = {"name": desired.name, "namespace": namespace, "labels": dict(desired.labels),
                "ownerReferences": [desired.owner.to_api()]}
    return {"apiVersion": RESOURCECLAIMS.api_version, "kind": RESOURCECLAIMS.kind, "metadata": metadata, "spec": spec}


class ClaimWrites:
    def __init__(self, api: Any, caches: Caches, metrics: ReconcilerMetrics, pool: ThreadPoolExecutor, stopping: threading.Event) -> None:
        self._api = api
        self._caches = caches
        self._metrics = metrics
        self._pool = pool
        self._stopping = stopping
        self.templates = TemplateReads(api)

    def _check_stopping(self) -> None:
        if self._stopping.is_set():
            raise Interrupted()

    def owner_replicas(self, namespace: str, work: OwnerWork, claim: str, doing: str) -> int | None:
        """The owner's replicas as the API server has them, read once per reconcile: None when it is
        gone, re-created, being deleted, or the read failed (the owner's failure: ``doing``)."""
        if work.live is None:
            reference = work.owner.reference
            try:
                found = Objects(self._api, OWNERS[reference.kind], namespace).find(reference.name)
            except Exception as err:  # noqa: BLE001 - api_failure raises what is not an API answer
                work.fail(api_failure(err, claim, doing))
                return None
            work.live = (_replicas(found, reference.uid),)
        return work.live[0]

    def apply_to_existing(self, namespace: str, work: OwnerWork, action: plan.Adopt | plan.Report) -> None:
        """An ``Adopt`` is written; a ``Report`` is the owner's failure."""
        if isinstance(action, plan.Report):
            work.fail(OwnerFailure(action.message, action.reason))
            return
        self._check_stopping()
        desired, existing, change = action
        try:
            patch = change.merge_patch(existing.resource_version)
            stored = Objects(self._api, RESOURCECLAIMS, namespace).patch(desired.name, patch, RECONCILER_MANAGER)
        except Exception as err:  # noqa: BLE001 - api_failure raises what is not an API answer
            work.fail(api_failure(err, desired.name))
            return
        self._caches.wrote(ClaimRecord.from_object(stored))
        work.writes += 1
        if change.adopts:
            work.adopted.append(desired.name)
        self._metrics.claim_writes.labels("adopted" if change.adopts else "labelled").inc()

    def create(self, pcs: PodCliqueSet, work: OwnerWork, missing: list[DesiredClaim]) -> bool:
        """Creates ``missing``; False when a batch failed (the owner's other claims wait for a retry)."""
        bodies: list[tuple[DesiredClaim, dict[str, Any]]] = []
        for desired in missing:
            try:
                bodies.append((desired, claim_body(pcs.namespace, desired, self._spec(pcs, work, desired))))
            except OwnerFailure as failure:
                work.fail(failure)
        written = 0
        for (desired, _), result in slow_start(self._pool, bodies, self._send, self._check_stopping):
            written += 1
            try:
                self._created(pcs.namespace, work, desired, result)
            except OwnerFailure as failure:
                work.fail(failure)
        return written == len(bodies)

    def _spec(self, pcs: PodCliqueSet, work: OwnerWork, desired: DesiredClaim) -> dict[str, Any]:
        try:
            return self.templates.claim_spec(pcs, desired.entry)
        except TemplateError as err:
            if err.missing:
                work.retry_within = TEMPLATE_RETRY
            reason = plan.TEMPLATE_NOT_FOUND if err.missing else plan.SYNC_FAILED
            raise OwnerFailure(f'ref "{desired.entry.name}" ({desired.source}): {err}', reason) from None
        except Exception as err:
            raise api_failure(err, desired.name) from None  # no answer (Unreachable), or a bug: raised as it is

    def _send(self, item: tuple[DesiredClaim, dict[str, Any]]) -> ClaimRecord | None:
        """Creates one claim (in a pool thread); None when one of that name exists already."""
        body = item[1]
        try:
            claims = Objects(self._api, RESOURCECLAIMS, body["metadata"]["namespace"])
            return ClaimRecord.from_object(claims.create(body, RECONCILER_MANAGER))
        except ApiException as err:
            if err.status == CONFLICT:
                return None
            raise

    def _created(self, namespace: str, work: OwnerWork, desired: DesiredClaim, result: ClaimRecord | None | Exception) -> None:
        """Accounts for one create; a lost race adopts what exists."""
        if isinstance(result, Exception):
            raise api_failure(result, desired.name)
        if result is None:
            try:
                found = Objects(self._api, RESOURCECLAIMS, namespace).find(desired.name)
            except Exception as err:
                raise api_failure(err, desired.name) from None
            if found is None:
                raise OwnerFailure(f'RC "{desired.name}": already exists, then not found; retrying')
            for action in plan.adoption(desired, ClaimRecord.from_object(found), namespace):
                self.apply_to_existing(namespace, work, action)
            return
        self._caches.created(result)
        work.created.append(desired.name)
        work.writes += 1
        self._metrics.claim_writes.labels("created").inc()

    def delete(self, work: OwnerWork, claims: list[ClaimRecord]) -> None:
        for claim, result in slow_start(self._pool, claims, self._delete, self._check_stopping):
            if isinstance(result, Exception):
                work.fail(api_failure(result, claim.name, "failed to delete stale "))
                continue
            self._caches.wrote(claim, deleted=True)
            if result:
                work.deleted.append(claim.name)
                work.writes += 1
                self._metrics.claim_writes.labels("deleted").inc()

    def _delete(self, claim: ClaimRecord) -> bool:
        """Deletes exactly this claim (UID precondition); False when it was gone already."""
        try:
            Objects(self._api, RESOURCECLAIMS, claim.namespace).delete(claim.name, claim.uid)
        except ApiException as err:
            if err.status == NOT_FOUND:
                return False
            raise
        return True


def _replicas(found: Obj | None, uid: str) -> int | None:
    """The replicas of the object read, if it is the owner of ``uid`` and not being deleted."""
    if found is None or not isinstance(found.get("spec"), dict):
        return None
    if found["metadata"].get("uid") != uid or found["metadata"].get("deletionTimestamp"):
        return None
    replicas = found["spec"].get("replicas", 0)
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None


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
        self._seen: TTLCache[tuple[str, OwnerReference, str, str, str], tuple[str, int]] = TTLCache(remembered, window)
        """The Event written for each, and how many times it happened."""
        self._seen_lock = threading.Lock()

    def record(self, namespace: str, about: OwnerReference, event_type: str, reason: str, message: str) -> None:
        key = (namespace, about, event_type, reason, message)
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()  # metav1.Time: seconds
        events = Objects(self._api, EVENTS, namespace)
        with self._seen_lock:
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
        with self._seen_lock:
            self._seen[key] = (name, count + 1)

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
