"""Ensuring one owner's claims, a chunk at a time (BEHAVIOUR.md §4.7).

An owner's claims come lazily in Grove's order (``claim_slots``) and are handled ``CHUNK``
positions at a time: each is looked up in the claim cache, and a cached claim exactly as desired
costs a comparison of shared tuples and nothing else. Only the claims that differ get a
``DesiredClaim``: those with other labels or no controller are adopted, missing ones are created
in slow-start batches. So memory does not grow with the replica count, and going over 100,000
claims that exist costs a fraction of a second.

A claim deleted by anyone in the last seconds is not re-created at once (its owner's deletion may
be on its way), and within ``RECHECK_AFTER_DELETION`` only when a read of the owner says it still
needs it: Grove's operator deletes the claims of a scaled-in owner as soon as it scales it, and
the owner's cache may not know yet.
"""

from __future__ import annotations

import logging
from typing import Any

from kubernetes.client.exceptions import ApiException

from webhook.core.sharing.desired import DesiredClaim, claim_slots, desired_claim
from webhook.core.sharing.owners import OwnedSharing
from webhook.kube.apierrors import CONFLICT
from webhook.kube.connection import connection_problem, is_connection_error
from webhook.reconciler.cluster.claimrecord import ClaimRecord, label_shape, shared
from webhook.reconciler.sync import events
from webhook.reconciler.sync.batches import ClaimWriter, slow_start
from webhook.reconciler.sync.claimapi import claim_body
from webhook.reconciler.sync.outcome import (
    OwnerFailure,
    OwnerWork,
    Pass,
    Unreachable,
    api_failure,
)
from webhook.reconciler.sync.ownership import OwnedByOther, plan
from webhook.reconciler.sync.templatecache import TemplateError

log = logging.getLogger(__name__)

CHUNK = 256
"""Claim positions checked, and their writes sent, at a time."""
TEMPLATE_RETRY = 5.0
"""Seconds within which a claim waiting for a missing template is tried again."""

Creation = tuple[DesiredClaim, dict[str, Any]]


class Shape:
    """What a claim of one owner looks like when it is exactly as desired, in the claim record's
    shared pieces."""

    def __init__(self, owned: OwnedSharing) -> None:
        self.base = label_shape(owned.owner.owner_labels())[0]
        self.index_label = owned.owner.level.value.replica_label
        self.references = shared((shared(owned.reference),))

    def matches(self, record: ClaimRecord, replica: int | None) -> bool:
        if record.references != self.references or record.base_labels != self.base:
            return False
        if replica is None:
            return record.index_label is None
        return record.index_label == self.index_label and record.index_value == str(replica)


class ClaimEnsurer(ClaimWriter):
    def ensure(self, p: Pass, work: OwnerWork, start: int, stop: int) -> int | None:
        """Positions ``start`` to ``stop`` of the owner's claims. Returns the position to go on
        from when the budget ran out first, else None (done, or writes failing: ``work`` says)."""
        shape = Shape(work.owned)
        position = start
        while position < stop:
            end = min(position + CHUNK, stop)
            if not self._chunk(p, work, shape, position, end):
                return None
            position = end
            if position < stop and p.spent():
                return position
        return None

    def _chunk(self, p: Pass, work: OwnerWork, shape: Shape, start: int, end: int) -> bool:
        """One chunk; False when writes failed, so that the owner's other claims wait for a retry."""
        owned = work.owned
        missing: list[DesiredClaim] = []
        recheck: list[DesiredClaim] = []
        changed: list[tuple[DesiredClaim, ClaimRecord]] = []
        deletions = self._caches.recently_deleted
        for index, entry, replica in claim_slots(owned, start, end):
            name = owned.owner.claim_name(entry, replica)
            record = self._caches.claim(p.namespace, name)
            if record is not None:
                if not shape.matches(record, replica):
                    changed.append((desired_claim(owned, index, entry, replica), record))
            elif wait := deletions.remaining((p.namespace, name)):
                work.complete = False
                p.outcome.requeue_after = max(p.outcome.requeue_after, wait)
            elif deletions.recent((p.namespace, name)):
                recheck.append(desired_claim(owned, index, entry, replica))
            else:
                missing.append(desired_claim(owned, index, entry, replica))
        for desired, record in changed:
            try:
                self._update(p, work, desired, record)
            except OwnerFailure as failure:
                work.fail(failure)
        if recheck:
            missing += self._still_needed(p, work, recheck)
        return self._create(p, work, missing)

    def _still_needed(self, p: Pass, work: OwnerWork, claims: list[DesiredClaim]) -> list[DesiredClaim]:
        """Of claims deleted a moment ago, those the owner as the API server has it needs."""
        try:
            replicas = p.live.replicas(work.owned)
        except ApiException as err:
            work.fail(api_failure(err, claims[0].name, "cannot read the owner of "))
            return []
        except Exception as err:
            if is_connection_error(err):
                raise Unreachable(connection_problem(err)) from None
            raise
        needed = [c for c in claims if replicas is not None and (c.replica is None or c.replica < replicas)]
        if len(needed) < len(claims):
            work.complete = False  # the owner's cache is behind: its event is on its way
        return needed

    # --- create ----------------------------------------------------------------------------------

    def _create(self, p: Pass, work: OwnerWork, missing: list[DesiredClaim]) -> bool:
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
                existing = self._created(p, work, desired, result)
                if existing is not None:
                    self._update(p, work, desired, existing)
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

    def _created(
        self, p: Pass, work: OwnerWork, desired: DesiredClaim, result: ClaimRecord | None | Exception
    ) -> ClaimRecord | None:
        """Account for one create; on a lost race (409: Grove's operator, say, was quicker)
        return what exists, for the update path."""
        if isinstance(result, Exception):
            raise api_failure(result, desired.name)
        if result is None:
            return self._read_after_conflict(p.namespace, desired)
        self._caches.wrote(result)
        work.created.append(desired.name)
        p.wrote = True
        self._metrics.claim_written("created")
        return None

    def _read_after_conflict(self, namespace: str, desired: DesiredClaim) -> ClaimRecord:
        try:
            existing = self._claims.read(namespace, desired.name)
        except Exception as err:
            raise api_failure(err, desired.name) from None
        if existing is None:
            raise OwnerFailure(f'RC "{desired.name}": already exists, then not found; retrying')
        return existing

    # --- adopt -----------------------------------------------------------------------------------

    def _update(self, p: Pass, work: OwnerWork, desired: DesiredClaim, existing: ClaimRecord) -> None:
        change = plan(existing.labels, existing.references, desired)
        if change is None:
            return
        if isinstance(change, OwnedByOther):
            raise OwnerFailure(change.message(p.namespace, desired.name), events.OWNED_BY_OTHER)
        self._check_stopping()
        try:
            updated = self._claims.patch(
                existing.namespace, desired.name, change.merge_patch(existing.resource_version)
            )
        except Exception as err:
            raise api_failure(err, desired.name) from None
        self._caches.wrote(updated)
        p.wrote = True
        if change.adopts:
            work.adopted.append(desired.name)
            self._metrics.claim_written("adopted")
        else:
            self._metrics.claim_written("labelled")
