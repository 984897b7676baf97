"""The claims each owner must have, in Grove's order (BEHAVIOUR.md §4.5 to §4.7), found by their
position so that an owner of a million replicas costs nothing until they are asked for, in chunks;
and the template each one's spec comes from (§6.1). Filters do not limit creation (§9 item 12)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from webhook.core.model.meta import ObjectKey, OwnerReference
from webhook.core.model.podcliqueset import ALL_REPLICAS, PER_REPLICA, Entries, PodCliqueSet, ResourceSharingSpec
from webhook.core.sharing.owners import Level, Owner

MAX_CLAIMS_PER_OWNER = 10_000
"""The reconciler's default limit of claims per owner (``--max-claims-per-owner``)."""


@dataclass(frozen=True, slots=True)
class DesiredClaim:
    name: str
    labels: dict[str, str]
    owner: OwnerReference
    entry: ResourceSharingSpec
    source: str
    """The entry's field path, e.g. ``spec.template.cliques[0].resourceSharing[1]``."""
    level: Level
    replica: int | None = None


def claims_needed(entries: Entries, replicas: int) -> int:
    all_replicas = sum(1 for e in entries if e.scope == ALL_REPLICAS)
    per_replica = sum(1 for e in entries if e.scope == PER_REPLICA)
    return all_replicas + per_replica * max(replicas, 0)


def claim_count(owner: Owner) -> int:
    return claims_needed(owner.entries, owner.replicas)


def over_limit(owner: Owner, count: int, limit: int) -> str:
    """The reconciler's Warning Event, and the webhook's warning, for an owner over the limit."""
    return (
        f"{owner.level.kind} {owner.name} needs {count} ResourceClaims, more than the limit of "
        f"{limit} (--max-claims-per-owner): only the first {limit} are created"
    )


def claim_slots(owner: Owner, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, ResourceSharingSpec, int | None]]:
    """(entry index, entry, replica) of the owner's claims at positions ``start`` to ``stop``: the
    AllReplicas entries, then the PerReplica entries of replica 0, 1, and so on."""
    all_replicas = list(owner.in_scope(ALL_REPLICAS))
    per_replica = list(owner.in_scope(PER_REPLICA))
    count = len(all_replicas) + len(per_replica) * max(owner.replicas, 0)
    end = count if stop is None else min(stop, count)
    for position in range(max(start, 0), end):
        if position < len(all_replicas):
            yield (*all_replicas[position], None)
        else:
            replica, k = divmod(position - len(all_replicas), len(per_replica))
            yield (*per_replica[k], replica)


def desired_claim(owner: Owner, index: int, entry: ResourceSharingSpec, replica: int | None) -> DesiredClaim:
    return DesiredClaim(
        owner.claim_name(entry, replica),
        owner.claim_labels(replica),
        owner.reference,
        entry,
        f"{owner.source}[{index}]",
        owner.level,
        replica,
    )


def desired_claims(owner: Owner, start: int = 0, stop: int | None = None) -> Iterator[DesiredClaim]:
    return (desired_claim(owner, i, e, replica) for i, e, replica in claim_slots(owner, start, stop))


@dataclass(frozen=True, slots=True)
class InternalTemplate:
    """``spec.template.resourceClaimTemplates[]`` entry: its ``templateSpec.spec`` is the claim spec."""

    name: str
    claim_spec: dict[str, Any]


def template_source(pcs: PodCliqueSet, entry: ResourceSharingSpec) -> InternalTemplate | ObjectKey:
    """The internal template an entry without a namespace names, else the object to read."""
    if not entry.namespace:
        internal = pcs.spec.template.internal_template(entry.name)
        if internal is not None:
            return InternalTemplate(entry.name, internal.claim_spec())
    return ObjectKey(entry.namespace or pcs.namespace, entry.name)
