"""One reconcile of one PodCliqueSet: ensure every owner's claims, then clean up stale ones.

The desired claims come from the core (``owners_of`` + ``desired_claims``), the same description
the pod webhook injects from. Each owner (the PodCliqueSet, each scaling group object, each
PodClique object) is handled on its own: a failure is reported on that owner, its stale-claim
cleanup is skipped (as in Grove, cleanup follows only a complete ensure), and the other owners go
on. API calls are kept to what differs: a claim the cache already has as desired costs nothing.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.sharing import DesiredClaim, OwnedSharing, desired_claims, owners_of, stale_claims
from webhook.reconciler import events
from webhook.reconciler.apierrors import CONFLICT, status_message
from webhook.reconciler.batches import slow_start
from webhook.reconciler.cache import Caches
from webhook.reconciler.children import current_children
from webhook.reconciler.claimrecord import ClaimRecord
from webhook.reconciler.claims import ClaimApi, InvalidClaim, claim_body, claim_model
from webhook.reconciler.events import EventRecorder, Regarding
from webhook.reconciler.index import PcsKey
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.reconciler.ownership import OwnedByOther, controlled_by_other, plan
from webhook.reconciler.templates import TemplateError, Templates

log = logging.getLogger(__name__)


class Interrupted(Exception):
    """Shutdown or a lost lease: stop before the next write (the one under way has finished)."""


@dataclass(slots=True)
class Outcome:
    """What one reconcile did; ``failures`` says whether the key must be retried."""

    created: list[str] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    requeue_after: float = 0.0
    """Seconds after which to reconcile again, though nothing failed (claims deleted a moment ago
    are re-created only once their owners' deletions, if any, have reached the caches)."""

    @property
    def ok(self) -> bool:
        return not self.failures

    def counts(self) -> tuple[int, int, int]:
        return len(self.created), len(self.adopted), len(self.deleted)


_ACTIONS = (
    (events.CLAIM_CREATED, "Created"),
    (events.CLAIM_ADOPTED, "Adopted"),
    (events.CLAIM_DELETED, "Deleted stale"),
)
MESSAGE_BUDGET = 900


def describe(verb: str, names: list[str]) -> str:
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


class PodCliqueSetReconciler:
    def __init__(
        self,
        api: client.ApiClient,
        caches: Caches,
        recorder: EventRecorder,
        metrics: ReconcilerMetrics,
        stopping: threading.Event,
        pool: ThreadPoolExecutor,
    ) -> None:
        self._api = api
        self._pool = pool
        self._claims = ClaimApi(api)
        self._caches = caches
        self._recorder = recorder
        self._metrics = metrics
        self._stopping = stopping

    def reconcile(self, key: PcsKey) -> Outcome:
        outcome = Outcome()
        pcs = self._caches.podcliqueset(key)
        if pcs is None or pcs.metadata.deletion_timestamp:
            return outcome  # the garbage collector removes the claims with their owners
        namespace = key[0]
        groups, cliques = current_children(pcs, self._caches.scaling_groups_of(key), self._caches.cliques_of(key))
        owners = owners_of(
            pcs, groups, cliques, on_error=lambda name, message: log.warning("%s/%s: %s", namespace, name, message)
        )
        templates = Templates(self._api, pcs)
        for owned in owners:
            before = outcome.counts()
            try:
                if self._ensure(namespace, owned, templates, outcome):
                    self._clean_up(key, owned, outcome)
            finally:
                self._report(namespace, owned, outcome, before)
        return outcome

    def _report(self, namespace: str, owned: OwnedSharing, outcome: Outcome, before: tuple[int, int, int]) -> None:
        """One Event per owner and action, naming the claims: a PodCliqueSet created from nothing
        costs an Event per owner, not one per claim."""
        about = regarding(namespace, owned)
        done = (outcome.created, outcome.adopted, outcome.deleted)
        for names, start, (reason, verb) in zip(done, before, _ACTIONS, strict=True):
            if len(names) > start:
                self._recorder.normal(about, reason, describe(verb, names[start:]))

    # --- ensure ----------------------------------------------------------------------------------

    def _ensure(self, namespace: str, owned: OwnedSharing, templates: Templates, outcome: Outcome) -> bool:
        """Ensure every claim of one owner; True when all of them are as desired."""
        about = regarding(namespace, owned)
        complete = True
        missing: list[tuple[DesiredClaim, client.ResourceV1ResourceClaim]] = []
        for desired in desired_claims(owned):
            existing = self._caches.claim(namespace, desired.name)
            try:
                if existing is not None:
                    self._update(namespace, desired, existing, outcome)
                elif wait := self._caches.recently_deleted.remaining((namespace, desired.name)):
                    complete = False
                    outcome.requeue_after = max(outcome.requeue_after, wait)
                else:
                    missing.append((desired, self._new_claim(namespace, desired, templates)))
            except _OwnerFailure as failure:
                complete = False
                self._failed(about, desired.name, failure, outcome)
        written = 0
        for (desired, _), result in slow_start(self._pool, missing, self._send, self._check_stopping):
            written += 1
            try:
                existing = self._created(namespace, desired, result, outcome)
                if existing is not None:
                    self._update(namespace, desired, existing, outcome)
            except _OwnerFailure as failure:
                complete = False
                self._failed(about, desired.name, failure, outcome)
        return complete and written == len(missing)

    def _new_claim(
        self, namespace: str, desired: DesiredClaim, templates: Templates
    ) -> client.ResourceV1ResourceClaim:
        try:
            spec = templates.claim_spec(desired.entry)
        except TemplateError as err:
            reason = events.TEMPLATE_NOT_FOUND if err.missing else events.SYNC_FAILED
            raise _OwnerFailure(f'ref "{desired.entry.name}" ({desired.source}): {err}', reason) from None
        try:
            return claim_model(claim_body(namespace, desired, spec))
        except InvalidClaim as err:
            raise _OwnerFailure(f'RC "{desired.name}": {err}') from None

    def _send(self, item: tuple[DesiredClaim, client.ResourceV1ResourceClaim]) -> ClaimRecord | None:
        """Create one claim (in a pool thread); None when one of that name exists already."""
        try:
            return self._claims.create(item[1])
        except ApiException as err:
            if err.status == CONFLICT:
                return None
            raise

    def _created(
        self, namespace: str, desired: DesiredClaim, result: ClaimRecord | None | Exception, outcome: Outcome
    ) -> ClaimRecord | None:
        """Account for one create; on a lost race (409) return what exists, for the update path."""
        if isinstance(result, ApiException):
            raise _OwnerFailure(f'RC "{desired.name}": {status_message(result)}')
        if isinstance(result, Exception):
            raise result
        if result is None:
            return self._read_after_conflict(namespace, desired)
        self._caches.pending.wrote(result)
        outcome.created.append(desired.name)
        self._metrics.claim_written("created")
        return None

    def _read_after_conflict(self, namespace: str, desired: DesiredClaim) -> ClaimRecord:
        try:
            existing = self._claims.read(namespace, desired.name)
        except ApiException as err:
            raise _OwnerFailure(f'RC "{desired.name}": {status_message(err)}') from None
        if existing is None:
            raise _OwnerFailure(f'RC "{desired.name}": already exists, then not found; retrying')
        return existing

    def _update(self, namespace: str, desired: DesiredClaim, existing: ClaimRecord, outcome: Outcome) -> None:
        change = plan(existing.labels, existing.owner_references, desired)
        if change is None:
            return
        if isinstance(change, OwnedByOther):
            raise _OwnerFailure(change.message(namespace, desired.name), events.OWNED_BY_OTHER)
        self._check_stopping()
        try:
            updated = self._claims.patch(namespace, desired.name, change.merge_patch(existing.resource_version))
        except ApiException as err:
            raise _OwnerFailure(f'RC "{desired.name}": {status_message(err)}') from None
        self._caches.pending.wrote(updated)
        if change.adopts:
            outcome.adopted.append(desired.name)
            self._metrics.claim_written("adopted")
        else:
            self._metrics.claim_written("labelled")

    def _failed(self, about: Regarding, name: str, failure: _OwnerFailure, outcome: Outcome) -> None:
        outcome.failures.append(f"{name}: {failure}")
        self._recorder.warning(about, failure.reason, str(failure))

    # --- clean up --------------------------------------------------------------------------------

    def _clean_up(self, key: PcsKey, owned: OwnedSharing, outcome: Outcome) -> None:
        """Delete this owner's PerReplica claims for replicas it no longer has (§4.8), each by exact
        name and UID: never a selector that could reach a claim created meanwhile. A claim another
        object controls is not this owner's to delete, and one being deleted is not deleted again."""
        claims = {claim.name: claim for claim in self._caches.claims_of(key) if not claim.deleting}
        stale = [
            claims[name]
            for name in stale_claims(owned, [(c.name, c.labels) for c in claims.values()])
            if controlled_by_other(claims[name].owner_references, owned.reference) is None
        ]
        for claim, result in slow_start(self._pool, stale, self._claims.delete, self._check_stopping):
            if isinstance(result, ApiException):
                message = f'failed to delete stale RC "{claim.name}": {status_message(result)}'
                self._failed(regarding(key[0], owned), claim.name, _OwnerFailure(message), outcome)
                continue
            if isinstance(result, Exception):
                raise result
            self._caches.pending.wrote(claim, deleted=True)
            if result:
                outcome.deleted.append(claim.name)
                self._metrics.claim_written("deleted")

    def _check_stopping(self) -> None:
        if self._stopping.is_set():
            raise Interrupted()


class _OwnerFailure(Exception):
    """One claim of one owner could not be made as desired; reported on the owner."""

    def __init__(self, message: str, reason: str = events.SYNC_FAILED) -> None:
        super().__init__(message)
        self.reason = reason

