"""What one owner's claims need, as actions computed from the caches without a client, a chunk of
claim positions at a time, so that a plan never holds all of an owner of a million replicas. An
existing claim is made ours as controller-runtime's ``SetControllerReference`` does it for Grove
(§4.6, §4.7): one with no controller, or controlled by an earlier object of the owner's kind and
name, gets the owner's reference; one controlled by anything else is refused. Grove's labels are
merged in; ``spec`` is never changed. Stale PerReplica claims are Grove's selector (§4.8).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from webhook.core.model.meta import ObjectKey, OwnerReference, controller_of
from webhook.core.model.podcliqueset import ResourceSharingSpec
from webhook.core.sharing.desired import DesiredClaim, claim_count, claim_slots, desired_claim, over_limit
from webhook.core.sharing.owners import LEVELS, Owner
from webhook.core.sharing.placement import index_below
from webhook.reconciler.cluster import INDEX_LABELS, ClaimRecord, RecentDeletions, label_shape, shared

CLAIM_CREATED = "ResourceClaimCreated"
CLAIM_ADOPTED = "ResourceClaimAdopted"
CLAIM_DELETED = "ResourceClaimDeleted"
TEMPLATE_NOT_FOUND = "ResourceClaimTemplateNotFound"
OWNED_BY_OTHER = "ResourceClaimOwnedByOther"
SYNC_FAILED = "ResourceClaimSyncFailed"
LIMIT_EXCEEDED = "ResourceClaimLimitExceeded"
INVALID_REPLICAS = "ResourceClaimInvalidReplicas"
CLAIM_MISSING = "ResourceClaimMissing"
MADE_BY_GROVE = "ResourceClaimsMadeByGrove"


def controlled_by_other(references: Sequence[OwnerReference], owner: OwnerReference) -> OwnerReference | None:
    """The claim's controller when not ``owner``: such a claim is neither adopted, changed nor deleted."""
    controller = controller_of(references)
    return controller if controller is not None and not controller.same_object(owner) else None


@dataclass(frozen=True, slots=True)
class OwnedByOther:
    controller: OwnerReference

    def message(self, namespace: str, name: str) -> str:
        return f"Object {namespace}/{name} is already owned by another {self.controller.kind} controller {self.controller.name}"


@dataclass(frozen=True, slots=True)
class MetadataChange:
    """The labels that differ and, when the controller reference changes, the whole new list."""

    labels: dict[str, str]
    owner_references: list[OwnerReference] | None

    @property
    def adopts(self) -> bool:
        return self.owner_references is not None

    def merge_patch(self, resource_version: str) -> dict[str, Any]:
        """A new reference list replaces the old one whole, so it carries the resourceVersion it was
        computed from: a concurrent change to the list fails with 409 instead of being overwritten."""
        metadata: dict[str, Any] = {}
        if self.labels:
            metadata["labels"] = self.labels
        if self.owner_references is not None:
            metadata["ownerReferences"] = [r.to_api() for r in self.owner_references]
            metadata["resourceVersion"] = resource_version
        return {"metadata": metadata}


def plan_change(labels: Mapping[str, str], references: Sequence[OwnerReference], desired: DesiredClaim) -> MetadataChange | OwnedByOther | None:
    """What to change on an existing claim so that it matches ``desired``; None when nothing."""
    other = controlled_by_other(references, desired.owner)
    if other is not None:
        return OwnedByOther(other)
    changed_labels = {k: v for k, v in desired.labels.items() if labels.get(k) != v}
    new_references = list(references)
    index = next((i for i, r in enumerate(references) if r.same_object(desired.owner)), None)
    if index is None:
        new_references.append(desired.owner)
    else:
        new_references[index] = desired.owner
    changed_references = new_references if new_references != list(references) else None
    if not changed_labels and changed_references is None:
        return None
    return MetadataChange(changed_labels, changed_references)


class Create(NamedTuple):
    claim: DesiredClaim


class Recreate(NamedTuple):
    """A claim deleted lately: created only if its owner, read now, still needs it (the owner's
    cache may not have seen a scale-in yet)."""

    claim: DesiredClaim


class Adopt(NamedTuple):
    claim: DesiredClaim
    existing: ClaimRecord
    change: MetadataChange


class Report(NamedTuple):
    """A Warning Event on the owner, whose claims are not all as desired."""

    reason: str
    message: str


class Defer(NamedTuple):
    """A claim deleted an instant ago: not re-created for ``seconds``, as its owner may be going too."""

    seconds: float


Action = Create | Recreate | Adopt | Report | Defer


class ClaimView(Protocol):
    """The claim cache as this reconciler last wrote or saw it."""

    recently_deleted: RecentDeletions

    def claim(self, namespace: str, name: str) -> ClaimRecord | None: ...


class _Shape:
    """A claim of the owner exactly as desired, as most are: a comparison of shared pieces."""

    def __init__(self, owner: Owner) -> None:
        self.base = label_shape(owner.owner_labels())[0]
        self.index_label = owner.level.replica_label
        self.references = shared((shared(owner.reference),))

    def matches(self, record: ClaimRecord, replica: int | None) -> bool:
        if record.references != self.references or record.base_labels != self.base:
            return False
        if replica is None:
            return record.index_label is None
        return record.index_label == self.index_label and record.index_value == str(replica)


def claims(owner: Owner, namespace: str, view: ClaimView, start: int, stop: int) -> list[Action]:
    """The actions for the owner's claims at positions ``start`` to ``stop``, in Grove's order."""
    shape = _Shape(owner)
    actions: list[Action] = []
    for index, entry, replica in claim_slots(owner, start, stop):
        record = view.claim(namespace, owner.claim_name(entry, replica))
        if record is None:
            actions.append(_missing(owner, namespace, view.recently_deleted, index, entry, replica))
        elif not shape.matches(record, replica):
            actions += adoption(desired_claim(owner, index, entry, replica), record, namespace)
    return actions


def missing(owner: Owner, namespace: str, view: ClaimView, limit: int) -> list[str]:
    """The owner's claims (the first ``limit``) not in the cache: where Grove's operator makes the
    claims, those it has not made (yet)."""
    names = (owner.claim_name(entry, replica) for _, entry, replica in claim_slots(owner, 0, limit))
    return [name for name in names if view.claim(namespace, name) is None]


def _missing(owner: Owner, namespace: str, deletions: RecentDeletions, index: int, entry: ResourceSharingSpec,
             replica: int | None) -> Action:
    key = ObjectKey(namespace, owner.claim_name(entry, replica))
    wait = deletions.remaining(key)
    if wait:
        return Defer(wait)
    desired = desired_claim(owner, index, entry, replica)
    return Recreate(desired) if deletions.recent(key) else Create(desired)


def adoption(desired: DesiredClaim, existing: ClaimRecord, namespace: str) -> list[Adopt | Report]:
    change = plan_change(existing.labels, existing.references, desired)
    if change is None:
        return []
    if isinstance(change, OwnedByOther):
        return [Report(OWNED_BY_OTHER, change.message(namespace, desired.name))]
    return [Adopt(desired, existing, change)]


def still_needed(recreated: list[Recreate], replicas: int | None) -> list[DesiredClaim]:
    """Of claims deleted a moment ago, those an owner of ``replicas`` now (None: gone) needs."""
    if replicas is None:
        return []
    return [r.claim for r in recreated if r.claim.replica is None or r.claim.replica < replicas]


def cleanup(owner: Owner, candidates: StaleCandidates, replicas: int | None = None) -> list[ClaimRecord]:
    """The owner's stale claims at its cached replicas, or at ``replicas`` read from the API server
    (stale both ways, when the cache is behind)."""
    return candidates.stale(owner, owner.replicas if replicas is None else max(replicas, owner.replicas))


def owner_reports(owner: Owner, limit: int) -> list[Report]:
    """What is said on an owner whose sharing cannot be reconciled in full."""
    if owner.replicas < 0:
        return [Report(INVALID_REPLICAS, f"spec.replicas is {owner.replicas}: no ResourceClaims are created or deleted "
                                         f"for this {owner.level.kind} until it is 0 or more")]
    count = claim_count(owner)
    return [Report(LIMIT_EXCEEDED, over_limit(owner, count, limit))] if count > limit else []


OWNER_LABEL = {level.replica_label: level.owner_label for level in LEVELS}  # None: the PodCliqueSet's level


class StaleCandidates:
    """A PodCliqueSet's cached claims with a replica-index label (but those being deleted already),
    grouped once per reconcile by that label and the owner its level names, so that each owner
    looks only at its own claims."""

    def __init__(self, records: Iterable[ClaimRecord]) -> None:
        self._groups: dict[tuple[str, str | None], list[tuple[ClaimRecord, str]]] = {}
        for record in records:
            if record.deleting or record.index_label is None or record.index_value is None:
                continue
            base = dict(record.base_labels)
            self._add(record, record.index_label, record.index_value, base)
            for label in INDEX_LABELS:  # a claim with two index labels is a candidate of both levels
                if label in base:
                    self._add(record, label, base[label], base)

    def _add(self, record: ClaimRecord, label: str, value: str, base: dict[str, str]) -> None:
        owner_label = OWNER_LABEL[label]
        owner = None if owner_label is None else base.get(owner_label)
        if owner_label is None or owner is not None:
            self._groups.setdefault((label, owner), []).append((record, value))

    def stale(self, owner: Owner, replicas: int) -> list[ClaimRecord]:
        """The owner's claims for replicas at or above ``replicas`` that no other object controls."""
        if not owner.entries:
            return []
        level = owner.level
        group = self._groups.get((level.replica_label, owner.name if level.owner_label else None), [])
        wanted = owner.owner_labels().items()
        found = [
            record for record, value in group
            if not index_below(value, replicas) and wanted <= dict(record.base_labels).items()
            and controlled_by_other(record.references, owner.reference) is None
        ]
        return sorted(found, key=lambda r: r.name)
