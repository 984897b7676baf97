"""One reconcile of one PodCliqueSet: ensure every owner's claims, then clean up stale ones.

The desired claims come from the core (``live_owners`` + ``claim_slots``), the same description the
pod webhook injects from. Each owner (the PodCliqueSet, each scaling group object, each PodClique
object) is handled on its own: a failure is reported on that owner, its stale-claim cleanup is
skipped (as in Grove, cleanup follows only a complete ensure), and the other owners go on. API
calls are kept to what differs: a claim the cache already has as desired costs nothing.

Bounded at any replica count: an owner's claims are counted before any is made, and an owner
that would need more than ``--max-claims-per-owner`` gets the first ones only, with a Warning
Event. A reconcile that has written for its budget stops between two chunks and remembers where
(``Continuation``); the PodCliqueSet goes to the back of the queue and goes on from there next
time, unless an event in between could have changed what was checked, and then starts over.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from kubernetes import client

from webhook.core.model.meta import OwnerReference
from webhook.core.model.projection import project
from webhook.core.sharing.desired import MAX_CLAIMS_PER_OWNER, claim_count, over_limit
from webhook.core.sharing.owners import OwnedSharing, live_owners
from webhook.reconciler.cluster.cache import Caches
from webhook.reconciler.cluster.children import current_children
from webhook.reconciler.cluster.index import PcsKey
from webhook.reconciler.cluster.liveowners import LiveOwners
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.reconciler.sync import events
from webhook.reconciler.sync.claimapi import ClaimApi
from webhook.reconciler.sync.cleanup import StaleCandidates, StaleCleaner
from webhook.reconciler.sync.ensure import ClaimEnsurer
from webhook.reconciler.sync.events import EventRecorder, Regarding
from webhook.reconciler.sync.outcome import (
    BUDGET,
    Interrupted,
    Outcome,
    OwnerWork,
    Pass,
    Unreachable,
)
from webhook.reconciler.sync.templatecache import TemplateCache, Templates

log = logging.getLogger(__name__)

_ACTIONS = (
    (events.CLAIM_CREATED, "Created"),
    (events.CLAIM_ADOPTED, "Adopted"),
    (events.CLAIM_DELETED, "Deleted stale"),
)
MESSAGE_BUDGET = 900
WARNINGS_PER_OWNER = 5
"""Warning Events per owner and reconcile (distinct messages); further failures are counted."""
ORPHANS_REMEMBERED = 4096

__all__ = ["Interrupted", "Outcome", "PodCliqueSetReconciler"]


def event_message(verb: str, names: list[str]) -> str:
    """``Created ResourceClaim a`` or ``Created 3 ResourceClaims: a, b, c``, naming as many claims
    as fit in an Event message and counting the rest."""
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


def regarding(namespace: str, owned: OwnedSharing) -> Regarding:
    reference = owned.reference
    return Regarding(reference.api_version, reference.kind, namespace, reference.name, reference.uid)


@dataclass(frozen=True, slots=True)
class Continuation:
    """Where a reconcile that ran out of budget stopped: every claim of ``owner`` before
    ``position``, and every owner before it, was as desired at ``epoch``."""

    epoch: int
    owner: OwnerReference
    position: int


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
        self._api = api
        self._caches = caches
        self._recorder = recorder
        self._metrics = metrics
        self._stopping = stopping
        self._limit = max_claims_per_owner
        self.budget = BUDGET
        self.templates = TemplateCache(api)
        claims = ClaimApi(api)
        self._ensurer = ClaimEnsurer(claims, caches, metrics, pool, self._check_stopping)
        self._cleaner = StaleCleaner(claims, caches, metrics, pool, self._check_stopping)
        self._continuations: dict[PcsKey, Continuation] = {}
        self._orphans: OrderedDict[str, None] = OrderedDict()

    def reconcile(self, key: PcsKey) -> Outcome:
        outcome = Outcome()
        epoch = self._caches.epoch(key)
        resume = self._continuations.pop(key, None)
        pcs = self._caches.podcliqueset(key)
        if pcs is None or pcs.metadata.deletion_timestamp:
            self._metrics.forget_owners(key)
            if pcs is None:
                self._report_orphans(key)
            return outcome  # the garbage collector removes the claims with their owners
        namespace = key[0]
        groups, cliques = current_children(pcs, self._caches.scaling_groups_of(key), self._caches.cliques_of(key))
        owners = live_owners(
            project(pcs), groups, cliques, on_error=lambda name, message: log.warning("%s/%s: %s", namespace, name, message)
        )
        first = 0
        if resume is not None:
            found = [i for i, o in enumerate(owners) if o.reference == resume.owner]
            resume = resume if found and resume.epoch == epoch else None
            first = found[0] if resume is not None else 0
        if resume is None:
            self._check_owners(key, namespace, owners)
        p = Pass(namespace, Templates(self.templates, pcs), LiveOwners(self._api, namespace), outcome, budget=self.budget)
        candidates: StaleCandidates | None = None
        for i in range(first, len(owners)):
            owned = owners[i]
            if owned.replicas < 0:
                continue  # reported by _check_owners; nothing created or deleted
            work = OwnerWork(owned)
            start = resume.position if resume is not None and i == first else 0
            reachable = True
            try:
                stopped = self._ensurer.ensure(p, work, start, min(claim_count(owned), self._limit))
                if stopped is not None:
                    outcome.partial = True
                    if work.complete:
                        self._continuations[key] = Continuation(epoch, owned.reference, stopped)
                elif work.complete:
                    if candidates is None:
                        candidates = StaleCandidates(self._caches.claims_of(key))
                    self._cleaner.clean_up(p, work, candidates)
            except Unreachable:
                reachable = False  # no Event could be written now
                raise
            finally:
                if reachable:
                    self._report(namespace, work)
                outcome.add(work)
            if outcome.partial:
                break
        if resume is not None and not outcome.partial:
            outcome.partial = True  # went on from a continuation: one full pass to finish
        return outcome

    # --- what is reported --------------------------------------------------------------------------

    def _check_owners(self, key: PcsKey, namespace: str, owners: list[OwnedSharing]) -> None:
        """Owners whose sharing cannot be reconciled in full: Warning Events, and the gauge of
        owners over the limit."""
        over = 0
        for owned in owners:
            about = regarding(namespace, owned)
            kind = owned.reference.kind
            if owned.replicas < 0:
                message = (
                    f"spec.replicas is {owned.replicas}: no ResourceClaims are created or deleted for this "
                    f"{kind} until it is 0 or more"
                )
                self._recorder.warning(about, events.INVALID_REPLICAS, message)
                continue
            count = claim_count(owned)
            if count > self._limit:
                over += 1
                self._recorder.warning(about, events.LIMIT_EXCEEDED, over_limit(owned, count, self._limit))
        self._metrics.owners_over_limit(key, over)

    def _report(self, namespace: str, work: OwnerWork) -> None:
        """One Event per owner and action, naming the claims: a PodCliqueSet created from nothing
        costs an Event per owner, not one per claim. Failures: an Event per distinct message, a
        few per owner."""
        about = regarding(namespace, work.owned)
        for names, (reason, verb) in zip((work.created, work.adopted, work.deleted), _ACTIONS, strict=True):
            if names:
                self._recorder.normal(about, reason, event_message(verb, names))
        reported: set[tuple[str, str]] = set()
        for failure in work.failures:
            seen = (failure.reason, str(failure))
            if seen not in reported and len(reported) < WARNINGS_PER_OWNER:
                reported.add(seen)
                self._recorder.warning(about, failure.reason, str(failure))

    def _report_orphans(self, key: PcsKey) -> None:
        """Scaling groups and PodCliques whose labels name a PodCliqueSet that does not exist:
        logged once each, at INFO when nothing will collect them (no controller), else at DEBUG
        (the garbage collector is on its way)."""
        children = [("PodCliqueScalingGroup", g.metadata) for g in self._caches.scaling_groups_of(key)]
        children += [("PodClique", c.metadata) for c in self._caches.cliques_of(key)]
        for kind, metadata in children:
            if metadata.uid in self._orphans:
                continue
            self._orphans[metadata.uid] = None
            while len(self._orphans) > ORPHANS_REMEMBERED:
                self._orphans.popitem(last=False)
            collected = any(r.controller for r in metadata.owner_references)
            log.log(
                logging.DEBUG if collected else logging.INFO,
                "%s %s/%s names PodCliqueSet %s, which does not exist; ignored%s",
                kind,
                metadata.namespace,
                metadata.name,
                key[1],
                " until the garbage collector removes it" if collected else "",
            )

    def _check_stopping(self) -> None:
        if self._stopping.is_set():
            raise Interrupted()
