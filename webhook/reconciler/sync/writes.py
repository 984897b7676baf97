"""The claim writes a plan asks for, and the reads of owners its conditional actions rest on.

Claims go out as plain JSON, for the API server to validate whatever fields a template uses.
Creates and deletes go in slow-start batches, as client-go's controllers send theirs, so that many
claims cost neither as many round trips end to end nor a burst of failures when something is wrong.
Every write is told to the caches at once, so that a reconcile before the watch reports it reads
what was written. A create that loses a race (Grove's operator was quicker) adopts what exists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kubernetes.client.exceptions import ApiException

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.sharing.desired import DesiredClaim
from webhook.core.sharing.owners import Owner
from webhook.kube.api import (
    CONFLICT, NOT_FOUND, PODCLIQUES, PODCLIQUESCALINGGROUPS, PODCLIQUESETS, RESOURCECLAIMS, Objects, connection_problem,
    is_connection_error, status_message,
)
from webhook.kube.templates import TemplateError, TemplateReads
from webhook.reconciler.cluster import Caches, ClaimRecord
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.reconciler.sync import plan

T = TypeVar("T")
R = TypeVar("R")

LIMIT = 8
"""Largest batch, and the writes in flight at once in the whole process (the pool's size)."""
TEMPLATE_RETRY = 5.0
"""Seconds within which a claim waiting for a missing template is tried again."""
FAILURES_KEPT = 20  # failure messages kept per owner; the rest are counted
OWNERS = {r.kind: r for r in (PODCLIQUESETS, PODCLIQUESCALINGGROUPS, PODCLIQUES)}


class Interrupted(Exception):
    """Shutdown or a lost lease: stop before the next write (the one under way has finished)."""


class Unreachable(Exception):
    """The API server did not answer: the reconcile stops and is retried, with no Event (none could
    be written anyway)."""


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


def write_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=LIMIT, thread_name_prefix="claim-write")


def slow_start(
    pool: ThreadPoolExecutor, items: Sequence[T], call: Callable[[T], R], before_batch: Callable[[], None]
) -> Iterator[tuple[T, R | Exception]]:
    """``(item, result or exception)`` for each item written, none after a batch in which one raised."""
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
    def __init__(self, api: Any, caches: Caches, metrics: ReconcilerMetrics, pool: ThreadPoolExecutor,
                 check_stopping: Callable[[], None]) -> None:
        self._api = api
        self._caches = caches
        self._metrics = metrics
        self._pool = pool
        self._check_stopping = check_stopping
        self.templates = TemplateReads(api)

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

    def adopt(self, namespace: str, work: OwnerWork, action: plan.Adopt) -> None:
        self._check_stopping()
        desired, existing, change = action
        try:
            stored = Objects(self._api, RESOURCECLAIMS, namespace).patch(desired.name, change.merge_patch(existing.resource_version))
        except Exception as err:
            raise api_failure(err, desired.name) from None
        self._caches.wrote(ClaimRecord.from_object(stored))
        work.writes += 1
        if change.adopts:
            work.adopted.append(desired.name)
        self._metrics.claim_written("adopted" if change.adopts else "labelled")

    def apply_to_existing(self, namespace: str, work: OwnerWork, action: plan.Action) -> None:
        """An ``Adopt`` is written; a ``Report`` is the owner's failure."""
        try:
            if isinstance(action, plan.Adopt):
                self.adopt(namespace, work, action)
            elif isinstance(action, plan.Report):
                raise OwnerFailure(action.message, action.reason)
        except OwnerFailure as failure:
            work.fail(failure)

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
            if is_connection_error(err):
                raise Unreachable(connection_problem(err)) from None
            raise

    def _send(self, item: tuple[DesiredClaim, dict[str, Any]]) -> ClaimRecord | None:
        """Creates one claim (in a pool thread); None when one of that name exists already."""
        body = item[1]
        try:
            return ClaimRecord.from_object(Objects(self._api, RESOURCECLAIMS, body["metadata"]["namespace"]).create(body))
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
        self._caches.wrote(result)
        work.created.append(desired.name)
        work.writes += 1
        self._metrics.claim_written("created")

    def delete(self, work: OwnerWork, deletes: list[plan.Delete]) -> None:
        for claim, result in slow_start(self._pool, [d.claim for d in deletes], self._delete, self._check_stopping):
            if isinstance(result, Exception):
                work.fail(api_failure(result, claim.name, "failed to delete stale "))
                continue
            self._caches.wrote(claim, deleted=True)
            if result:
                work.deleted.append(claim.name)
                work.writes += 1
                self._metrics.claim_written("deleted")

    def _delete(self, claim: ClaimRecord) -> bool:
        """Deletes exactly this claim (UID precondition); False when it was gone already."""
        try:
            Objects(self._api, RESOURCECLAIMS, claim.namespace).delete(claim.name, claim.uid)
        except ApiException as err:
            if err.status == NOT_FOUND:
                return False
            raise
        return True


def _replicas(obj: object, uid: str) -> int | None:
    """The replicas of the object read, if it is the owner of ``uid`` and not being deleted."""
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    spec = obj.get("spec") if isinstance(obj, dict) else None
    if not isinstance(metadata, dict) or not isinstance(spec, dict):
        return None
    if metadata.get("uid") != uid or metadata.get("deletionTimestamp"):
        return None
    replicas = spec.get("replicas", 0)
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None
