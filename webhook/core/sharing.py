"""Who shares which claims: the one description both the pod webhook and the reconciler use.

A ``SharingOwner`` is one object that owns shared claims (the PodCliqueSet, a scaling-group object
or a PodClique object) with the resource-sharing list that applies to it. ``claims_for_pod`` answers
"which claims does this pod get" (resource-sharing.md §5.2, §5.3) from what the object stores keep of
a PodCliqueSet (``pcs_sharing``); ``desired_claims`` answers "which
claims must exist for this owner" (§3.2, §4.5 to §4.7) and ``stale_claims`` "which must go" (§4.8).
Names come only from ``naming.claim_name`` and labels only from ``SharingOwner.claim_labels``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from webhook.core import labels, naming
from webhook.core.identity import CliqueIdentity, IdentityError, atoi, clique_identity, clique_template
from webhook.core.pcs_sharing import PodCliqueSetSharing, SharingEntry
from webhook.core.podcliqueset import (
    PodClique,
    PodCliqueScalingGroup,
    PodCliqueSet,
    ResourceSharingSpec,
    Scope,
)

GROVE_API_VERSION = "grove.io/v1alpha1"


@dataclass(frozen=True, slots=True)
class LevelInfo:
    kind: str
    owner_label: str | None
    replica_label: str


class Level(Enum):
    """The three levels, as data: owner kind, the label naming the owner, the replica-index label."""

    PODCLIQUESET = LevelInfo("PodCliqueSet", None, labels.PCS_REPLICA_INDEX)
    SCALING_GROUP = LevelInfo("PodCliqueScalingGroup", labels.PCSG, labels.PCSG_REPLICA_INDEX)
    CLIQUE = LevelInfo("PodClique", labels.PODCLIQUE, labels.POD_INDEX)


@dataclass(frozen=True, slots=True)
class SharingOwner:
    """One owner of shared claims and the resource-sharing entries that apply to it."""

    level: Level
    name: str
    pcs_name: str
    entries: Sequence[ResourceSharingSpec]
    source: str = ""
    """Field path of ``entries`` in the PodCliqueSet, for messages."""

    def claim_name(self, entry: ResourceSharingSpec, replica: int | None) -> str:
        return naming.claim_name(self.name, entry.name, replica)

    def owner_labels(self) -> dict[str, str]:
        """The labels that select this owner's claims (base labels plus the owner's own label)."""
        result = labels.claim_base_labels(self.pcs_name)
        if self.level.value.owner_label:
            result[self.level.value.owner_label] = self.name
        return result

    def claim_labels(self, replica: int | None) -> dict[str, str]:
        result = self.owner_labels()
        if replica is not None:
            result[self.level.value.replica_label] = str(replica)
        return result

    def in_scope(self, scope: Scope) -> Iterator[tuple[int, ResourceSharingSpec]]:
        """Entries of one scope with their index; entries of any other scope are skipped, as Grove does."""
        return ((i, e) for i, e in enumerate(self.entries) if e.scope == scope)


# --- Pods -----------------------------------------------------------------------------------------


def filter_selects(clique_names: Collection[str], scaling_group_names: Collection[str], match_names: Sequence[str]) -> bool:
    """§5.3: a PodCliqueSet-level filter selects a pod when either of its lists names the pod's
    clique or its scaling group (both lists are compared with both names)."""
    return any(n in clique_names or n in scaling_group_names for n in match_names)


def matches_pcs_filter(entry: SharingEntry, match_names: Sequence[str]) -> bool:
    flt = entry.filter
    return flt is None or not match_names or filter_selects(flt.clique_names, flt.scaling_group_names, match_names)


def matches_group_filter(entry: SharingEntry, clique_name: str) -> bool:
    """§5.3: a scaling-group filter names cliques of the group."""
    flt = entry.filter
    return flt is None or clique_name in flt.clique_names


def _always(_: SharingEntry) -> bool:
    return True


def pcs_owner(pcs: PodCliqueSet) -> SharingOwner:
    return SharingOwner(
        Level.PODCLIQUESET,
        pcs.metadata.name,
        pcs.metadata.name,
        pcs.spec.template.resource_sharing,
        "spec.template.resourceSharing",
    )


def claims_for_pod(pcs: PodCliqueSetSharing, identity: CliqueIdentity, pod_index: Callable[[], int]) -> list[str]:
    """The claim names a pod of the PodClique ``identity`` gets, in Grove's order (§5.2): for each
    level (PodCliqueSet, scaling group, clique), its AllReplicas entries, then its PerReplica ones
    for the pod's replica of that level; entries whose filter leaves the pod out are skipped.

    ``pod_index`` is called only when a clique-level PerReplica entry needs it, so a pod without the
    pod-index label is refused only when the label matters.
    """
    clique = pcs.clique_of(identity)
    group = pcs.scaling_group_of(identity)
    match_names = [clique.name] if group is None else [clique.name, group.name]
    levels: list[tuple[str, Sequence[SharingEntry], Callable[[], int], Callable[[SharingEntry], bool]]] = [
        (pcs.name, pcs.entries, lambda: identity.pcs_replica, lambda e: matches_pcs_filter(e, match_names))
    ]
    if group is not None:
        levels.append(
            (identity.scaling_group_fqn, group.entries, lambda: identity.scaling_group_replica,
             lambda e: matches_group_filter(e, clique.name))
        )
    levels.append((identity.clique_fqn, clique.entries, pod_index, _always))

    names: list[str] = []
    for owner, entries, replica, matches in levels:
        names.extend(naming.claim_name(owner, e.name, None) for e in entries if e.scope == Scope.ALL_REPLICAS and matches(e))
        per_replica = [e for e in entries if e.scope == Scope.PER_REPLICA and matches(e)]
        if per_replica:
            index = replica()
            names.extend(naming.claim_name(owner, e.name, index) for e in per_replica)
    return names


# --- Claims that must exist -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OwnerReference:
    """The controller reference a claim carries (§4.6)."""

    kind: str
    name: str
    uid: str
    api_version: str = GROVE_API_VERSION


@dataclass(frozen=True, slots=True)
class OwnedSharing:
    """A sharing owner as it exists now: its object's UID and current replica count."""

    owner: SharingOwner
    uid: str
    replicas: int

    @property
    def reference(self) -> OwnerReference:
        return OwnerReference(self.owner.level.value.kind, self.owner.name, self.uid)


@dataclass(frozen=True, slots=True)
class DesiredClaim:
    """One ResourceClaim that must exist, and the entry it comes from."""

    name: str
    labels: dict[str, str]
    owner: OwnerReference
    entry: ResourceSharingSpec
    source: str
    """The entry's field path, e.g. ``spec.template.cliques[0].resourceSharing[1]``."""
    level: Level
    replica: int | None = None


def _scoped(owned: OwnedSharing) -> tuple[list[tuple[int, ResourceSharingSpec]], list[tuple[int, ResourceSharingSpec]]]:
    return list(owned.owner.in_scope(Scope.ALL_REPLICAS)), list(owned.owner.in_scope(Scope.PER_REPLICA))


def claim_count(owned: OwnedSharing) -> int:
    """How many claims the owner needs, counted without listing them: one per AllReplicas entry,
    plus one per PerReplica entry and replica (none for zero or fewer replicas)."""
    all_replicas, per_replica = _scoped(owned)
    return len(all_replicas) + len(per_replica) * max(owned.replicas, 0)


def claim_slots(
    owned: OwnedSharing, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, ResourceSharingSpec, int | None]]:
    """(entry index, entry, replica) of the owner's claims at positions ``start`` to ``stop`` in
    Grove's order (§4.7): AllReplicas entries first, then the PerReplica entries of replica 0, of
    replica 1, and so on. Produced one at a time: a position is found arithmetically, so a
    million replicas cost nothing until their claims are asked for."""
    all_replicas, per_replica = _scoped(owned)
    end = claim_count(owned) if stop is None else min(stop, claim_count(owned))
    for position in range(max(start, 0), end):
        if position < len(all_replicas):
            yield (*all_replicas[position], None)
        else:
            replica, k = divmod(position - len(all_replicas), len(per_replica))
            yield (*per_replica[k], replica)


def desired_claim(owned: OwnedSharing, index: int, entry: ResourceSharingSpec, replica: int | None) -> DesiredClaim:
    owner = owned.owner
    return DesiredClaim(
        owner.claim_name(entry, replica),
        owner.claim_labels(replica),
        owned.reference,
        entry,
        f"{owner.source}[{index}]",
        owner.level,
        replica,
    )


def desired_claims(owned: OwnedSharing, start: int = 0, stop: int | None = None) -> Iterator[DesiredClaim]:
    """The owner's claims at positions ``start`` to ``stop`` (all by default), in Grove's order,
    one at a time.

    Filters do not limit creation (§5.3): a claim exists for every entry even if no pod uses it.
    """
    return (desired_claim(owned, i, e, replica) for i, e, replica in claim_slots(owned, start, stop))


def claim_names(owned: OwnedSharing) -> Iterator[tuple[str, int, ResourceSharingSpec]]:
    """(claim name, entry index, entry) of the same claims as ``desired_claims``, without building
    labels and owner references: what admission-time checks need."""
    owner = owned.owner
    return ((owner.claim_name(e, replica), i, e) for i, e, replica in claim_slots(owned))


def index_below(value: str, replicas: int) -> bool:
    """Whether a replica-index label names one of ``0..replicas-1`` as Grove's selector spells them
    (``notin (0,1,...)`` compares text: ``01`` or ``+1`` is no valid index)."""
    if not (value.isascii() and value.isdigit()) or (len(value) > 1 and value[0] == "0"):
        return False
    return len(value) <= len(str(replicas)) and int(value) < replicas


def stale_claims(owned: OwnedSharing, existing: Iterable[tuple[str, Mapping[str, str]]]) -> list[str]:
    """Names of this owner's PerReplica claims for replicas >= N (§4.8 selector semantics).

    An owner with no entries cleans up nothing. A claim is this owner's when it carries all of
    ``owner_labels``; it is stale when its replica-index label is present and not in 0..N-1.
    """
    if not owned.owner.entries:
        return []
    selector = owned.owner.owner_labels().items()
    replica_label = owned.owner.level.value.replica_label
    return [
        name
        for name, claim_labels in existing
        if replica_label in claim_labels
        and not index_below(claim_labels[replica_label], owned.replicas)
        and all(claim_labels.get(k) == v for k, v in selector)
    ]


def _replicas(value: int | None) -> int:
    return max(value or 0, 0)


def owners_of(
    pcs: PodCliqueSet,
    scaling_groups: Iterable[PodCliqueScalingGroup],
    cliques: Iterable[PodClique],
    on_error: Callable[[str, str], None] = lambda _name, _message: None,
) -> list[OwnedSharing]:
    """The sharing owners of a PodCliqueSet as they exist: the PCS itself plus the given PCSG and
    PodClique objects (those being deleted are skipped). Objects Grove's labels do not place are
    reported through ``on_error(object name, message)`` and skipped. Replica counts are as the
    objects say, negative ones included: such an owner has no PerReplica claims, and what to do
    about its existing ones is the caller's decision."""
    owners = [OwnedSharing(pcs_owner(pcs), pcs.metadata.uid, pcs.spec.replicas)]
    groups = pcs.spec.template.pod_clique_scaling_groups
    for obj in scaling_groups:
        if obj.metadata.deletion_timestamp:
            continue
        try:
            pcs_replica = atoi(obj.metadata.labels.get(labels.PCS_REPLICA_INDEX, ""))
        except ValueError as err:
            on_error(obj.metadata.name, f"invalid label {labels.PCS_REPLICA_INDEX}: {err}")
            continue
        index, config = next(
            (
                (g, c)
                for g, c in enumerate(groups)
                if naming.scaling_group_name(pcs.metadata.name, pcs_replica, c.name) == obj.metadata.name
            ),
            (-1, None),
        )
        if config is None:
            namespace = pcs.metadata.namespace
            on_error(
                obj.metadata.name,
                f"no matching PodCliqueScalingGroupConfig in PodCliqueSet {namespace}/{pcs.metadata.name} "
                f"for PodCliqueScalingGroup {obj.metadata.namespace}/{obj.metadata.name}",
            )
            continue
        owner = SharingOwner(
            Level.SCALING_GROUP,
            obj.metadata.name,
            pcs.metadata.name,
            config.resource_sharing,
            f"spec.template.podCliqueScalingGroups[{index}].resourceSharing",
        )
        owners.append(OwnedSharing(owner, obj.metadata.uid, obj.spec.replicas or 0))
    for clique in cliques:
        if clique.metadata.deletion_timestamp:
            continue
        part_of = clique.metadata.labels.get(labels.PART_OF, pcs.metadata.name)
        try:
            identity = clique_identity(clique.metadata.namespace, part_of, clique.metadata.name, clique.metadata.labels)
            template = clique_template(pcs, identity)
        except IdentityError as err:
            on_error(clique.metadata.name, str(err))
            continue
        index = pcs.spec.template.cliques.index(template)
        owner = SharingOwner(
            Level.CLIQUE,
            clique.metadata.name,
            part_of,
            template.resource_sharing,
            f"spec.template.cliques[{index}].resourceSharing",
        )
        owners.append(OwnedSharing(owner, clique.metadata.uid, clique.spec.replicas or 0))
    return owners


def planned_owners(pcs: PodCliqueSet) -> list[OwnedSharing]:
    """The owners a PodCliqueSet will have once Grove has built it from its template: scaling
    groups with their template replicas, PodCliques with their template replicas (at least 1, as
    Grove's defaulting sets). Used to check the claim names a spec will produce before it exists."""
    template = pcs.spec.template
    pcs_name = pcs.metadata.name
    owners = [OwnedSharing(pcs_owner(pcs), "", _replicas(pcs.spec.replicas))]
    members = {name for g in template.pod_clique_scaling_groups for name in g.clique_names}
    for pcs_replica in range(_replicas(pcs.spec.replicas)):
        for c, clique in enumerate(template.cliques):
            if clique.name in members:
                continue
            owner = SharingOwner(
                Level.CLIQUE,
                naming.standalone_clique_name(pcs_name, pcs_replica, clique.name),
                pcs_name,
                clique.resource_sharing,
                f"spec.template.cliques[{c}].resourceSharing",
            )
            owners.append(OwnedSharing(owner, "", max(_replicas(clique.spec.replicas), 1)))
        for g, group in enumerate(template.pod_clique_scaling_groups):
            group_fqn = naming.scaling_group_name(pcs_name, pcs_replica, group.name)
            group_owner = SharingOwner(
                Level.SCALING_GROUP,
                group_fqn,
                pcs_name,
                group.resource_sharing,
                f"spec.template.podCliqueScalingGroups[{g}].resourceSharing",
            )
            owners.append(OwnedSharing(group_owner, "", _replicas(group.template_replicas())))
            for group_replica in range(_replicas(group.template_replicas())):
                for clique_name in group.clique_names:
                    member = template.clique(clique_name)
                    if member is None:
                        continue
                    c = template.cliques.index(member)
                    owner = SharingOwner(
                        Level.CLIQUE,
                        naming.member_clique_name(group_fqn, group_replica, clique_name),
                        pcs_name,
                        member.resource_sharing,
                        f"spec.template.cliques[{c}].resourceSharing",
                    )
                    owners.append(OwnedSharing(owner, "", max(_replicas(member.spec.replicas), 1)))
    return owners
