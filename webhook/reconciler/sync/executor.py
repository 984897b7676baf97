"""The executor of one reconcile: applies each owner's plan, and owns what a plan leaves out.

For each owner in turn it asks the plan for a chunk of ``CHUNK`` claim positions at a time and
applies the actions (``writes``), up to ``--max-claims-per-owner`` claims; after a complete ensure
it asks for the stale claims and deletes them. It owns:

- the time budget: once claims were written for ``budget`` seconds it stops between two chunks
  and remembers where (a ``Continuation``); the PodCliqueSet goes to the back of the queue and goes
  on from there next time, unless an event in between could have changed what was checked (the
  caches' epoch moved), and then starts over;
- writes not yet seen: every write is told to the caches (``Caches.wrote``) by ``writes``;
- Events: one per owner and action, naming the claims, and a few per distinct failure; the owners'
  own problems (negative replicas, more claims than the limit) on a fresh pass.

One owner's failure never stops the others; an API server that does not answer (``Unreachable``)
ends the reconcile at once, with nothing reported (an Event could not be written anyway).
"""

from __future__ import annotations

from typing import NamedTuple

from kubernetes import client

from webhook.core.model.meta import ObjectKey, OwnerReference
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.sharing.desired import DesiredClaim, claim_count
from webhook.core.sharing.owners import Owner
from webhook.reconciler.cluster.cache import Caches
from webhook.reconciler.cluster.liveowners import LiveOwners
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.reconciler.sync import events, plan
from webhook.reconciler.sync.events import EventRecorder, event_message
from webhook.reconciler.sync.outcome import BUDGET, Outcome, OwnerFailure, OwnerWork, Pass, Unreachable
from webhook.reconciler.sync.stale import StaleCandidates
from webhook.reconciler.sync.templates import TemplateReads, Templates
from webhook.reconciler.sync.writes import ClaimWrites

CHUNK = 256
"""Claim positions planned, and their writes sent, at a time."""
WARNINGS_PER_OWNER = 5
"""Warning Events per owner and reconcile (distinct messages); further failures are counted."""
_ACTIONS = (
    (events.CLAIM_CREATED, "Created"),
    (events.CLAIM_ADOPTED, "Adopted"),
    (events.CLAIM_DELETED, "Deleted stale"),
)


class Observed(NamedTuple):
    """What one reconcile works from: the PodCliqueSet cached, its owners as they exist, and the
    caches' epoch for it when they were read."""

    key: ObjectKey
    epoch: int
    pcs: PodCliqueSet
    owners: list[Owner]


class Continuation(NamedTuple):
    """Where a reconcile that ran out of budget stopped: every claim of ``owner`` before
    ``position``, and every owner before it, was as desired at ``epoch``."""

    epoch: int
    owner: OwnerReference
    position: int


class Executor:
    def __init__(
        self,
        api: client.ApiClient,
        caches: Caches,
        writes: ClaimWrites,
        recorder: EventRecorder,
        metrics: ReconcilerMetrics,
        limit: int,
    ) -> None:
        self._api = api
        self._caches = caches
        self._writes = writes
        self._recorder = recorder
        self._metrics = metrics
        self._limit = limit
        self.budget = BUDGET
        self.templates = TemplateReads(api)
        self._continuations: dict[ObjectKey, Continuation] = {}

    def apply(self, observed: Observed) -> Outcome:
        """Every owner's plan applied, from where the last reconcile stopped if it still holds."""
        resumed = self._resume(observed)
        if resumed is None:
            self._report_owners(observed)
        namespace = observed.key.namespace
        p = Pass(namespace, Templates(self.templates, observed.pcs), LiveOwners(self._api, namespace), Outcome(), budget=self.budget)
        first, position = resumed or (0, 0)
        for i in range(first, len(observed.owners)):
            owner = observed.owners[i]
            if owner.replicas >= 0 and self._owner(p, observed, owner, position if i == first else 0):
                break
        if resumed is not None:
            p.outcome.partial = True  # went on from a continuation: one full pass to finish
        return p.outcome

    def _resume(self, observed: Observed) -> tuple[int, int] | None:
        """(owner, claim position) to go on from, when nothing changed since the last stop."""
        stopped = self._continuations.pop(observed.key, None)
        if stopped is None or stopped.epoch != observed.epoch:
            return None
        found = next((i for i, owner in enumerate(observed.owners) if owner.reference == stopped.owner), None)
        return None if found is None else (found, stopped.position)

    def _owner(self, p: Pass, observed: Observed, owner: Owner, start: int) -> bool:
        """One owner's claims ensured from ``start``, then its stale ones deleted; True when the
        budget ran out first."""
        work = OwnerWork(owner)
        try:
            stopped = self._ensure(p, work, start, min(claim_count(owner), self._limit))
            if stopped is None and work.complete:
                self._clean_up(p, work, observed.key)
        except Unreachable:
            raise
        except BaseException:
            self._report(p.namespace, work)  # what was done before shutdown, or a bug
            raise
        self._report(p.namespace, work)
        p.outcome.add(work)
        if stopped is None:
            return False
        p.outcome.partial = True
        if work.complete:
            self._continuations[observed.key] = Continuation(observed.epoch, owner.reference, stopped)
        return True

    # --- ensure ----------------------------------------------------------------------------------

    def _ensure(self, p: Pass, work: OwnerWork, start: int, stop: int) -> int | None:
        """Positions ``start`` to ``stop``, a chunk at a time. Returns the position to go on from
        when the budget ran out first, else None (done, or writes failing: ``work`` says)."""
        position = start
        while position < stop:
            end = min(position + CHUNK, stop)
            if not self._apply(p, work, plan.claims(work.owner, p.namespace, self._caches, position, end)):
                return None
            position = end
            if position < stop and p.spent():
                return position
        return None

    def _apply(self, p: Pass, work: OwnerWork, actions: list[plan.Action]) -> bool:
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
                p.outcome.requeue_after = max(p.outcome.requeue_after, action.seconds)
            else:
                self._apply_to_existing(p, work, action)
        if recreated:
            created += self._still_needed(p, work, recreated)
        return self._writes.create(p, work, created)

    def _apply_to_existing(self, p: Pass, work: OwnerWork, action: plan.Action) -> None:
        try:
            self._writes.apply_to_existing(p, work, action)
        except OwnerFailure as failure:
            work.fail(failure)

    def _still_needed(self, p: Pass, work: OwnerWork, recreated: list[plan.Recreate]) -> list[DesiredClaim]:
        replicas = self._writes.owner_replicas(p, work, recreated[0].claim.name, "cannot read the owner of ")
        needed = plan.still_needed(recreated, replicas)
        if len(needed) < len(recreated):
            work.complete = False  # the owner's cache is behind: its event is on its way
        return needed

    # --- clean up --------------------------------------------------------------------------------

    def _clean_up(self, p: Pass, work: OwnerWork, key: ObjectKey) -> None:
        """The owner's stale claims, confirmed with a read of the owner: deleted only when it still
        is the owner and they are stale at its replicas now too."""
        if p.candidates is None:
            p.candidates = StaleCandidates(self._caches.claims_of(key))
        owner = work.owner
        deletes = plan.cleanup(owner, p.candidates)
        if not deletes:
            return
        doing = f"cannot read {owner.level.kind} {owner.name} to delete "
        replicas = self._writes.owner_replicas(p, work, deletes[0].claim.name, doing)
        if replicas is None:
            return  # gone, re-created, or unreadable: the owner's own event is on its way
        if replicas != owner.replicas:
            deletes = plan.cleanup(owner, p.candidates, replicas)
        self._writes.delete(p, work, deletes)

    # --- Events ----------------------------------------------------------------------------------

    def _report(self, namespace: str, work: OwnerWork) -> None:
        """One Event per owner and action, naming the claims: a PodCliqueSet created from nothing
        costs an Event per owner, not one per claim. Failures: an Event per distinct message, a
        few per owner."""
        about = work.owner.reference
        for names, (reason, verb) in zip((work.created, work.adopted, work.deleted), _ACTIONS, strict=True):
            if names:
                self._recorder.normal(namespace, about, reason, event_message(verb, names))
        reported = dict.fromkeys((failure.reason, str(failure)) for failure in work.failures)
        for reason, message in list(reported)[:WARNINGS_PER_OWNER]:
            self._recorder.warning(namespace, about, reason, message)

    def _report_owners(self, observed: Observed) -> None:
        """Owners whose sharing cannot be reconciled in full: Warning Events, and the gauge of
        owners over the limit."""
        over = 0
        for owner in observed.owners:
            for report in plan.owner_reports(owner, self._limit):
                over += report.reason == events.LIMIT_EXCEEDED
                self._recorder.warning(observed.key.namespace, owner.reference, report.reason, report.message)
        self._metrics.owners_over_limit(observed.key, over)
