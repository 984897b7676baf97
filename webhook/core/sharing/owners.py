"""The owners of shared claims, and the one walk that lists them (BEHAVIOUR.md §4.6, §4.7).

An owner is one object that owns shared claims: the PodCliqueSet, a PodCliqueScalingGroup object
or a PodClique object, with the resource-sharing entries that apply to it. The three levels are
data (``Level``: the owner's kind, the label naming it on its claims, the replica-index label), as
in Grove's ``ResourceSharer``, so no rule is written once per level.

Owners come from one of two places, and both make them with the same constructors, so names,
entries and field paths always agree:

- ``planned_owners`` walks the spec: the owners Grove builds from the template, with concrete
  replica indices (what a PodCliqueSet will create) or open ones (the name families the validating
  webhook checks, ``sharing.patterns``);
- ``live_owners`` places the scaling groups and PodCliques that exist (the reconciler's caches) by
  their labels, as Grove places them, with their own replica counts and UIDs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum

from webhook.core.gocompat.strconv import atoi
from webhook.core.model import labels
from webhook.core.model.meta import OwnerReference
from webhook.core.model.podcliqueset import PodClique, PodCliqueScalingGroup, Scope
from webhook.core.model.projection import PodCliqueSetSharing, SharingEntry
from webhook.core.sharing import naming
from webhook.core.sharing.placement import CliqueIdentity, IdentityError, clique_identity, clique_of


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
    entries: tuple[SharingEntry, ...]
    source: str = ""
    """Field path of ``entries`` in the PodCliqueSet, for messages."""

    def claim_name(self, entry: SharingEntry, replica: int | None) -> str:
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

    def in_scope(self, scope: Scope) -> Iterator[tuple[int, SharingEntry]]:
        """Entries of one scope with their index; entries of any other scope are skipped, as Grove does."""
        return ((i, e) for i, e in enumerate(self.entries) if e.scope == scope)


@dataclass(frozen=True, slots=True)
class OwnedSharing:
    """An owner with its object's UID and replica count (the object's now, or the template's)."""

    owner: SharingOwner
    uid: str
    replicas: int
    identity: CliqueIdentity | None = field(default=None, compare=False)
    """A PodClique's place in its PodCliqueSet (``placement``), which its pods share: None for the
    other levels."""

    @property
    def reference(self) -> OwnerReference:
        """The controller reference its claims carry (§4.6)."""
        return OwnerReference.controlling(self.owner.level.value.kind, self.owner.name, self.uid)


# --- the constructors both walks use ---------------------------------------------------------------

PCS_ENTRIES = "spec.template.resourceSharing"


def pcs_owner(pcs: PodCliqueSetSharing) -> SharingOwner:
    return SharingOwner(Level.PODCLIQUESET, pcs.name, pcs.name, pcs.entries, PCS_ENTRIES)


def _group_owner(pcs: PodCliqueSetSharing, g: int, name: str) -> SharingOwner:
    source = f"spec.template.podCliqueScalingGroups[{g}].resourceSharing"
    return SharingOwner(Level.SCALING_GROUP, name, pcs.name, pcs.scaling_groups[g].entries, source)


def _clique_owner(pcs: PodCliqueSetSharing, c: int, name: str, pcs_name: str) -> SharingOwner:
    source = f"spec.template.cliques[{c}].resourceSharing"
    return SharingOwner(Level.CLIQUE, name, pcs_name, pcs.cliques[c].entries, source)


# --- the spec's owners -----------------------------------------------------------------------------

Indices = Callable[[int], Iterable[int]]
"""The replica indices to walk for a count: ``range`` for concrete owners, or one open index."""


def _clique_replicas(replicas: int | None) -> int:
    """Grove's defaulting turns a clique's 0 replicas into 1."""
    return max(replicas or 0, 1)


def planned_owners(pcs: PodCliqueSetSharing, indices: Indices = range) -> Iterator[OwnedSharing]:
    """The owners Grove builds from the spec, in its order, with the replicas each starts with: the
    PodCliqueSet; then for each of its replicas the standalone PodCliques, and each scaling group
    followed by the PodCliques of each of its replicas. Standalone and member PodCliques start with
    their template's replicas (at least 1), scaling groups with theirs (1 when unset). UIDs are
    unknown (empty) but the PodCliqueSet's, when it has one: the others may not exist yet.
    PodCliques carry their identity, as their pods' labels will give it."""
    yield OwnedSharing(pcs_owner(pcs), pcs.uid, max(pcs.replicas, 0))
    members = {name for group in pcs.scaling_groups for name in group.clique_names}
    standalone = [c for c, clique in enumerate(pcs.cliques) if clique.name not in members]
    for i in indices(max(pcs.replicas, 0)):
        for c in standalone:
            clique = pcs.cliques[c]
            name = naming.standalone_clique_name(pcs.name, i, clique.name)
            identity = CliqueIdentity(pcs.namespace, pcs.name, i, name, clique.name)
            yield OwnedSharing(_clique_owner(pcs, c, name, pcs.name), "", _clique_replicas(clique.replicas), identity)
        for g, group in enumerate(pcs.scaling_groups):
            group_name = naming.scaling_group_name(pcs.name, i, group.name)
            group_replicas = max(1 if group.replicas is None else group.replicas, 0)
            yield OwnedSharing(_group_owner(pcs, g, group_name), "", group_replicas)
            for j in indices(group_replicas):
                for clique_name in group.clique_names:
                    member = pcs.clique_index(clique_name)
                    if member is None:
                        continue
                    name = naming.member_clique_name(group_name, j, clique_name)
                    replicas = _clique_replicas(pcs.cliques[member].replicas)
                    identity = CliqueIdentity(pcs.namespace, pcs.name, i, name, clique_name, group_name, j)
                    yield OwnedSharing(_clique_owner(pcs, member, name, pcs.name), "", replicas, identity)


# --- the owners that exist -------------------------------------------------------------------------


def live_owners(
    pcs: PodCliqueSetSharing,
    scaling_groups: Iterable[PodCliqueScalingGroup],
    cliques: Iterable[PodClique],
    on_error: Callable[[str, str], None] = lambda _name, _message: None,
) -> list[OwnedSharing]:
    """The sharing owners of a PodCliqueSet as they exist: the PodCliqueSet itself plus the given
    scaling-group and PodClique objects (those being deleted are skipped). Objects Grove's labels do
    not place are reported through ``on_error(object name, message)`` and skipped. Replica counts are
    as the objects say, negative ones included: such an owner has no PerReplica claims, and what to
    do about its existing ones is the caller's decision."""
    owners = [OwnedSharing(pcs_owner(pcs), pcs.uid, pcs.replicas)]
    for obj in scaling_groups:
        if obj.metadata.deletion_timestamp:
            continue
        try:
            pcs_replica = atoi(obj.metadata.labels.get(labels.PCS_REPLICA_INDEX, ""))
        except ValueError as err:
            on_error(obj.metadata.name, f"invalid label {labels.PCS_REPLICA_INDEX}: {err}")
            continue
        g = next(
            (
                g
                for g, group in enumerate(pcs.scaling_groups)
                if naming.scaling_group_name(pcs.name, pcs_replica, group.name) == obj.metadata.name
            ),
            None,
        )
        if g is None:
            on_error(
                obj.metadata.name,
                f"no matching PodCliqueScalingGroupConfig in PodCliqueSet {pcs.namespace}/{pcs.name} "
                f"for PodCliqueScalingGroup {obj.metadata.namespace}/{obj.metadata.name}",
            )
            continue
        owners.append(OwnedSharing(_group_owner(pcs, g, obj.metadata.name), obj.metadata.uid, obj.spec.replicas or 0))
    for clique in cliques:
        if clique.metadata.deletion_timestamp:
            continue
        part_of = clique.metadata.labels.get(labels.PART_OF, pcs.name)
        try:
            identity = clique_identity(clique.metadata.namespace, part_of, clique.metadata.name, clique.metadata.labels)
            clique_of(pcs, identity)
        except IdentityError as err:
            on_error(clique.metadata.name, str(err))
            continue
        c = pcs.clique_index(identity.clique_name)
        assert c is not None, "clique_of found it"
        owner = _clique_owner(pcs, c, clique.metadata.name, part_of)
        owners.append(OwnedSharing(owner, clique.metadata.uid, clique.spec.replicas or 0, identity))
    return owners
