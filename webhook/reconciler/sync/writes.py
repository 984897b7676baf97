"""The claim writes a plan asks for, and the reads of owners its conditional actions rest on.

Creates and deletes go in slow-start batches (``batches``); each write is told to the caches at
once (``Caches.wrote``), so a reconcile that runs before the watch reports it reads the written
state. A create that loses a race (409: Grove's operator, say, was quicker) reads what exists and
adopts it. Every failure is the owner's (``OwnerFailure``), but an API server that does not answer
(``Unreachable``), which ends the reconcile at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kubernetes.client.exceptions import ApiException

from webhook.core.sharing.desired import DesiredClaim
from webhook.kube.apierrors import CONFLICT
from webhook.kube.connection import connection_problem, is_connection_error
from webhook.reconciler.cluster.cache import Caches
from webhook.reconciler.cluster.claimrecord import ClaimRecord
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.reconciler.sync import events, plan
from webhook.reconciler.sync.batches import slow_start
from webhook.reconciler.sync.claimapi import ClaimApi, claim_body
from webhook.reconciler.sync.outcome import OwnerFailure, OwnerWork, Pass, Unreachable, api_failure
from webhook.reconciler.sync.templates import TemplateError

log = logging.getLogger(__name__)

TEMPLATE_RETRY = 5.0
"""Seconds within which a claim waiting for a missing template is tried again."""

Creation = tuple[DesiredClaim, dict[str, Any]]


class ClaimWrites:
    def __init__(
        self,
        claims: ClaimApi,
        caches: Caches,
        metrics: ReconcilerMetrics,
        pool: ThreadPoolExecutor,
        check_stopping: Callable[[], None],
    ) -> None:
        self._claims = claims
        self._caches = caches
        self._metrics = metrics
        self._pool = pool
        self._check_stopping = check_stopping

    # --- reads of the owner ------------------------------------------------------------------------

    def owner_replicas(self, p: Pass, work: OwnerWork, claim: str, doing: str) -> int | None:
        """The owner's replicas as the API server has them now (None: gone, or re-created); a read
        that fails is the owner's failure (``doing``: what the read was for) and reads as None."""
        try:
            return p.live.replicas(work.owner)
        except Exception as err:  # noqa: BLE001 - api_failure raises what is not an API answer
            work.fail(api_failure(err, claim, doing))
            return None

    # --- adopt -----------------------------------------------------------------------------------

    def adopt(self, p: Pass, work: OwnerWork, action: plan.Adopt) -> None:
        self._check_stopping()
        desired, existing, change = action
        try:
            updated = self._claims.patch(existing.namespace, desired.name, change.merge_patch(existing.resource_version))
        except Exception as err:
            raise api_failure(err, desired.name) from None
        self._caches.wrote(updated)
        p.wrote = True
        if change.adopts:
            work.adopted.append(desired.name)
            self._metrics.claim_written("adopted")
        else:
            self._metrics.claim_written("labelled")

    # --- create ----------------------------------------------------------------------------------

    def create(self, p: Pass, work: OwnerWork, missing: list[DesiredClaim]) -> bool:
        """Creates ``missing``; False when writes failed (the owner's other claims wait for a retry)."""
        items: list[Creation] = []
        for desired in missing:
            try:
                items.append((desired, self._new_claim(p, desired)))
            except OwnerFailure as failure:
                work.fail(failure)
        written = 0
        for (desired, _), result in slow_start(self._pool, items, self._send, self._check_stopping):
            written += 1
            try:
                self._created(p, work, desired, result)
            except OwnerFailure as failure:
                work.fail(failure)
        return written == len(items)

    def _new_claim(self, p: Pass, desired: DesiredClaim) -> dict[str, Any]:
        try:
            spec = p.templates.claim_spec(desired.entry)
        except TemplateError as err:
            if err.missing:
                p.outcome.retry_within = TEMPLATE_RETRY
            reason = events.TEMPLATE_NOT_FOUND if err.missing else events.SYNC_FAILED
            raise OwnerFailure(f'ref "{desired.entry.name}" ({desired.source}): {err}', reason) from None
        except Exception as err:
            if is_connection_error(err):
                raise Unreachable(connection_problem(err)) from None
            raise
        return claim_body(p.namespace, desired, spec)

    def _send(self, item: Creation) -> ClaimRecord | None:
        """Create one claim (in a pool thread); None when one of that name exists already."""
        try:
            return self._claims.create(item[1])
        except ApiException as err:
            if err.status == CONFLICT:
                return None
            raise

    def _created(self, p: Pass, work: OwnerWork, desired: DesiredClaim, result: ClaimRecord | None | Exception) -> None:
        """Account for one create; a lost race adopts what exists."""
        if isinstance(result, Exception):
            raise api_failure(result, desired.name)
        if result is None:
            for action in plan.adoption(desired, self._read_after_conflict(p.namespace, desired), p.namespace):
                self.apply_to_existing(p, work, action)
            return
        self._caches.wrote(result)
        work.created.append(desired.name)
        p.wrote = True
        self._metrics.claim_written("created")

    def _read_after_conflict(self, namespace: str, desired: DesiredClaim) -> ClaimRecord:
        try:
            existing = self._claims.read(namespace, desired.name)
        except Exception as err:
            raise api_failure(err, desired.name) from None
        if existing is None:
            raise OwnerFailure(f'RC "{desired.name}": already exists, then not found; retrying')
        return existing

    def apply_to_existing(self, p: Pass, work: OwnerWork, action: plan.Action) -> None:
        """An ``Adopt`` is written; a ``Report`` is the owner's failure."""
        if isinstance(action, plan.Adopt):
            self.adopt(p, work, action)
        elif isinstance(action, plan.Report):
            raise OwnerFailure(action.message, action.reason)

    # --- delete ----------------------------------------------------------------------------------

    def delete(self, p: Pass, work: OwnerWork, deletes: list[plan.Delete]) -> None:
        stale = [d.claim for d in deletes]
        for claim, result in slow_start(self._pool, stale, self._claims.delete, self._check_stopping):
            if isinstance(result, Exception):
                work.fail(api_failure(result, claim.name, "failed to delete stale "))
                continue
            self._caches.wrote(claim, deleted=True)
            if result:
                work.deleted.append(claim.name)
                p.wrote = True
                self._metrics.claim_written("deleted")
