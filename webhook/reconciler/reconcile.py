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
from dataclasses import dataclass, field

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.sharing import DesiredClaim, OwnedSharing, desired_claims, owners_of, stale_claims
from webhook.reconciler import events
from webhook.reconciler.apierrors import CONFLICT, status_message
from webhook.reconciler.cache import Caches
from webhook.reconciler.children import current_children
from webhook.reconciler.claimrecord import ClaimRecord
from webhook.reconciler.claims import ClaimApi, InvalidClaim, claim_body
from webhook.reconciler.events import EventRecorder, Regarding
from webhook.reconciler.index import PcsKey
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.reconciler.ownership import MetadataChange, OwnedByOther, plan
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

    @property
    def ok(self) -> bool:
        return not self.failures


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
    ) -> None:
        self._api = api
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
            if self._ensure(namespace, owned, templates, outcome):
                self._clean_up(key, owned, outcome)
        return outcome

    # --- ensure ----------------------------------------------------------------------------------

    def _ensure(self, namespace: str, owned: OwnedSharing, templates: Templates, outcome: Outcome) -> bool:
        """Ensure every claim of one owner; True when all of them are as desired."""
        complete = True
        for desired in desired_claims(owned):
            existing = self._caches.claim(namespace, desired.name)
            if existing is None and (namespace, desired.name) in self._caches.recently_deleted:
                complete = False  # its deletion re-queues this PodCliqueSet shortly
                continue
            try:
                if existing is None:
                    existing = self._create(namespace, owned, desired, templates, outcome)
                if existing is not None:
                    self._update(namespace, owned, desired, existing, outcome)
            except _OwnerFailure as failure:
                complete = False
                outcome.failures.append(f"{desired.name}: {failure}")
                failure.report(self._recorder, regarding(namespace, owned))
        return complete

    def _create(
        self, namespace: str, owned: OwnedSharing, desired: DesiredClaim, templates: Templates, outcome: Outcome
    ) -> ClaimRecord | None:
        """Create the claim; on a lost race (409) return what exists, for the update path."""
        try:
            spec = templates.claim_spec(desired.entry)
        except TemplateError as err:
            reason = events.TEMPLATE_NOT_FOUND if err.missing else events.SYNC_FAILED
            raise _OwnerFailure(f'ref "{desired.entry.name}" ({desired.source}): {err}', reason) from None
        self._check_stopping()
        try:
            created = self._claims.create(claim_body(namespace, desired, spec))
        except InvalidClaim as err:
            raise _OwnerFailure(f'RC "{desired.name}": {err}') from None
        except ApiException as err:
            if err.status != CONFLICT:
                raise _OwnerFailure(f'RC "{desired.name}": {status_message(err)}') from None
            return self._read_after_conflict(namespace, desired)
        self._caches.pending.wrote(created)
        outcome.created.append(desired.name)
        self._metrics.claim_written("created")
        self._recorder.normal(regarding(namespace, owned), events.CLAIM_CREATED, f"Created ResourceClaim {desired.name}")
        return None

    def _read_after_conflict(self, namespace: str, desired: DesiredClaim) -> ClaimRecord:
        try:
            existing = self._claims.read(namespace, desired.name)
        except ApiException as err:
            raise _OwnerFailure(f'RC "{desired.name}": {status_message(err)}') from None
        if existing is None:
            raise _OwnerFailure(f'RC "{desired.name}": already exists, then not found; retrying')
        return existing

    def _update(
        self, namespace: str, owned: OwnedSharing, desired: DesiredClaim, existing: ClaimRecord, outcome: Outcome
    ) -> None:
        change = plan(existing.labels, existing.owner_references, desired)
        if change is None:
            return
        if isinstance(change, OwnedByOther):
            raise _OwnerFailure(change.message(namespace, desired.name), events.OWNED_BY_OTHER)
        self._check_stopping()
        updated = self._patch(namespace, desired, existing, change)
        self._caches.pending.wrote(updated)
        if change.adopts:
            outcome.adopted.append(desired.name)
            self._metrics.claim_written("adopted")
            self._recorder.normal(
                regarding(namespace, owned), events.CLAIM_ADOPTED, f"Adopted ResourceClaim {desired.name}"
            )
        else:
            self._metrics.claim_written("labelled")

    def _patch(self, namespace: str, desired: DesiredClaim, existing: ClaimRecord, change: MetadataChange) -> ClaimRecord:
        try:
            return self._claims.patch(namespace, desired.name, change.merge_patch(existing.resource_version))
        except ApiException as err:
            raise _OwnerFailure(f'RC "{desired.name}": {status_message(err)}') from None

    # --- clean up --------------------------------------------------------------------------------

    def _clean_up(self, key: PcsKey, owned: OwnedSharing, outcome: Outcome) -> None:
        """Delete this owner's PerReplica claims for replicas it no longer has (§4.8), one by one,
        by exact name and UID: never a selector that could reach a claim created meanwhile."""
        claims = {claim.name: claim for claim in self._caches.claims_of(key)}
        for name in stale_claims(owned, [(c.name, c.labels) for c in claims.values()]):
            claim = claims[name]
            self._check_stopping()
            try:
                deleted = self._claims.delete(claim)
            except ApiException as err:
                message = f'failed to delete stale RC "{name}": {status_message(err)}'
                outcome.failures.append(message)
                self._recorder.warning(regarding(key[0], owned), events.SYNC_FAILED, message)
                continue
            self._caches.pending.wrote(claim, deleted=True)
            if deleted:
                outcome.deleted.append(name)
                self._metrics.claim_written("deleted")
                self._recorder.normal(regarding(key[0], owned), events.CLAIM_DELETED, f"Deleted stale ResourceClaim {name}")

    def _check_stopping(self) -> None:
        if self._stopping.is_set():
            raise Interrupted()


class _OwnerFailure(Exception):
    """One claim of one owner could not be made as desired; reported on the owner."""

    def __init__(self, message: str, reason: str = events.SYNC_FAILED) -> None:
        super().__init__(message)
        self.reason = reason

    def report(self, recorder: EventRecorder, about: Regarding) -> None:
        recorder.warning(about, self.reason, str(self))

