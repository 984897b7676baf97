"""The owners of shared claims and where they sit in a PodCliqueSet (BEHAVIOUR.md §4.6, §4.7). The
levels are data (``Level``), as in Grove's ``ResourceSharer``, so no rule is written once per level.
``planned_owners`` walks the spec for the owners Grove builds, ``live_owners`` places those that
exist by their labels; both make owners with one constructor, so that names and paths agree."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, NamedTuple, TypeVar

from webhook.core.gocompat.gojson import atoi
from webhook.core.model import labels
from webhook.core.model.meta import OwnerReference
from webhook.core.model.podcliqueset import (
    Entries, PodClique, PodCliqueScalingGroup, PodCliqueScalingGroupConfig, PodCliqueSet,
    PodCliqueSetSpec, PodCliqueTemplateSpec, ResourceSharingSpec,
)
from webhook.core.sharing import naming
from webhook.core.sharing.placement import CliqueIdentity, IdentityError, clique_identity, clique_of


class Level(Enum):
    """The three levels, as data: owner kind, the label naming the owner, the replica-index label."""

    PODCLIQUESET = ("PodCliqueSet", None, labels.PCS_REPLICA_INDEX)
    SCALING_GROUP = ("PodCliqueScalingGroup", labels.PCSG, labels.PCSG_REPLICA_INDEX)
    CLIQUE = ("PodClique", labels.PODCLIQUE, labels.POD_INDEX)

    def __init__(self, kind: str, owner_label: str | None, replica_label: str) -> None:
        self.kind = kind
        self.owner_label = owner_label
        self.replica_label = replica_label


LEVELS = tuple(Level)
PCS_ENTRIES = "spec.template.resourceSharing"
I = TypeVar("I", int, naming.OpenIndex)
OnError = Callable[[str, str], None]


@dataclass(frozen=True, slots=True)
class Owner:
    """The PodCliqueSet, a PodCliqueScalingGroup or a PodClique, with the entries that apply to it,
    its UID (empty for one that may not exist yet) and its replica count (now, or to start with)."""

    level: Level
    name: str
    pcs_name: str
    entries: Entries
    source: str
    """Field path of ``entries``, for messages."""
    uid: str = ""
    replicas: int = 0
    identity: CliqueIdentity | None = field(default=None, compare=False)
    """A PodClique's place (``placement``), which its pods share; None for the other levels."""

    @property
    def reference(self) -> OwnerReference:
        """The controller reference its claims carry (§4.6)."""
        return OwnerReference.controlling(self.level.kind, self.name, self.uid)

    def claim_name(self, entry: ResourceSharingSpec, replica: int | None) -> str:
        return naming.claim_name(self.name, entry.name, replica)

    def owner_labels(self) -> dict[str, str]:
        result = labels.claim_base_labels(self.pcs_name)
        if self.level.owner_label:
            result[self.level.owner_label] = self.name
        return result

    def claim_labels(self, replica: int | None) -> dict[str, str]:
        result = self.owner_labels()
        if replica is not None:
            result[self.level.replica_label] = str(replica)
        return result

    def in_scope(self, scope: str) -> Iterator[tuple[int, ResourceSharingSpec]]:
        """Entries of one scope with their index (Grove skips any other scope)."""
        return ((i, e) for i, e in enumerate(self.entries) if e.scope == scope)


def entries_source(level: Level, template: int) -> str:
    if level is Level.PODCLIQUESET:
        return PCS_ENTRIES
    kind = "cliques" if level is Level.CLIQUE else "podCliqueScalingGroups"
    return f"spec.template.{kind}[{template}].resourceSharing"


def level_entries(spec: PodCliqueSetSpec, level: Level, template: int) -> Entries:
    if level is Level.PODCLIQUESET:
        found: Entries | None = spec.template.resource_sharing
    elif level is Level.CLIQUE:
        found = spec.template.cliques[template].resource_sharing
    else:
        found = spec.template.pod_clique_scaling_groups[template].resource_sharing
    return found or ()


def _owner(pcs: PodCliqueSet, level: Level, template: int, name: str, pcs_name: str, uid: str, replicas: int,
           identity: CliqueIdentity | None = None) -> Owner:
    entries = level_entries(pcs.spec, level, template)
    return Owner(level, name, pcs_name, entries, entries_source(level, template), uid, replicas, identity)


class Place(NamedTuple, Generic[I]):
    """Where an owner sits: its template, its PodCliqueSet replica, and its group's."""

    level: Level
    template: int = 0
    pcs_replica: I | None = None
    group: int = 0
    group_replica: I | None = None


Counts = Callable[[PodCliqueSetSpec, Level, int], int]
"""The replicas a walk gives the owners of a level made from a template: as they start
(``planned_replicas``), at the autoscalers' most (``most_replicas``), or as a scale writes them."""


def planned_replicas(spec: PodCliqueSetSpec, level: Level, template: int) -> int:
    if level is Level.PODCLIQUESET:
        return max(spec.replicas, 0)
    if level is Level.SCALING_GROUP:
        return group_replicas(spec.template.pod_clique_scaling_groups[template])
    return clique_replicas(spec.template.cliques[template])


def most_replicas(spec: PodCliqueSetSpec, level: Level, template: int) -> int:
    """The autoscaler's ``maxReplicas`` where one is set above the replicas the owner starts with."""
    planned = planned_replicas(spec, level, template)
    if level is Level.PODCLIQUESET:
        return planned
    owner = spec.template.pod_clique_scaling_groups[template] if level is Level.SCALING_GROUP else spec.template.cliques[template]
    most = owner.max_replicas
    return most if most is not None and most > planned else planned


def group_replicas(group: PodCliqueScalingGroupConfig) -> int:
    """As the template gives them: the CRD defaults an absent value to 1."""
    return max(1 if group.replicas is None else group.replicas, 0)


def clique_replicas(clique: PodCliqueTemplateSpec) -> int:
    """At least 1: Grove's defaulting turns 0 into 1."""
    return max(clique.spec.replicas or 0, 1)


def places(spec: PodCliqueSetSpec, indices: Callable[[int], Iterable[I]], counts: Counts = planned_replicas) -> Iterator[Place[I]]:
    """Every owner of the spec in Grove's order: the PodCliqueSet, then in each replica the
    standalone PodCliques and each scaling group with its PodCliques, at a count's ``indices``."""
    pcs_place: Place[I] = Place(Level.PODCLIQUESET, 0, None, 0, None)
    yield pcs_place
    standalone, members = clique_templates(spec)
    clique, group = Level.CLIQUE, Level.SCALING_GROUP
    for i in indices(counts(spec, Level.PODCLIQUESET, 0)):
        yield from [Place(clique, c, i, 0, None) for c in standalone]
        for g, member_templates in enumerate(members):
            group_place: Place[I] = Place(group, g, i, 0, None)
            yield group_place
            for j in indices(counts(spec, group, g)):
                yield from [Place(clique, member, i, g, j) for member in member_templates]


def clique_templates(spec: PodCliqueSetSpec) -> tuple[list[int], list[list[int]]]:
    """The positions of the standalone clique templates, and of each scaling group's members: the
    first template of each name its ``cliqueNames`` lists, once, as it makes one PodClique."""
    template = spec.template
    first: dict[str, int] = {}
    for c, clique in enumerate(template.cliques):
        first.setdefault(clique.name, c)
    groups = template.pod_clique_scaling_groups
    grouped = {name for group in groups for name in group.clique_names}
    standalone = [c for c, clique in enumerate(template.cliques) if clique.name not in grouped]
    return standalone, [[first[name] for name in dict.fromkeys(group.clique_names) if name in first] for group in groups]


def _planned(pcs: PodCliqueSet, place: Place[int]) -> Owner:
    replicas = planned_replicas(pcs.spec, place.level, place.template)
    if place.level is Level.PODCLIQUESET:
        return _owner(pcs, place.level, 0, pcs.name, pcs.name, pcs.metadata.uid, replicas)
    i = place.pcs_replica
    assert i is not None
    groups = pcs.spec.template.pod_clique_scaling_groups
    if place.level is Level.SCALING_GROUP:
        name = naming.scaling_group_name(pcs.name, i, groups[place.template].name)
        return _owner(pcs, place.level, place.template, name, pcs.name, "", replicas)
    clique = pcs.spec.template.cliques[place.template].name
    if place.group_replica is None:
        identity = CliqueIdentity(pcs.namespace, pcs.name, i, naming.standalone_clique_name(pcs.name, i, clique), clique)
    else:
        group = naming.scaling_group_name(pcs.name, i, groups[place.group].name)
        member = naming.member_clique_name(group, place.group_replica, clique)
        identity = CliqueIdentity(pcs.namespace, pcs.name, i, member, clique, group, place.group_replica)
    return _owner(pcs, place.level, place.template, identity.clique_fqn, pcs.name, "", replicas, identity)


def planned_owners(pcs: PodCliqueSet, indices: Callable[[int], Iterable[int]] = range) -> Iterator[Owner]:
    """Grove's owners as they start; UIDs empty but the PodCliqueSet's: the rest may not exist."""
    return (_planned(pcs, place) for place in places(pcs.spec, indices))


def _live_group(pcs: PodCliqueSet, obj: PodCliqueScalingGroup, on_error: OnError) -> Owner | None:
    name = obj.metadata.name
    try:
        pcs_replica = atoi(obj.metadata.labels.get(labels.PCS_REPLICA_INDEX, ""))
    except ValueError as err:
        on_error(name, f"invalid label {labels.PCS_REPLICA_INDEX}: {err}")
        return None
    for g, group in enumerate(pcs.spec.template.pod_clique_scaling_groups):
        if naming.scaling_group_name(pcs.name, pcs_replica, group.name) == name:
            return _owner(pcs, Level.SCALING_GROUP, g, name, pcs.name, obj.metadata.uid, obj.spec.replicas or 0)
    on_error(
        name,
        f"no matching PodCliqueScalingGroupConfig in PodCliqueSet {pcs.namespace}/{pcs.name} "
        f"for PodCliqueScalingGroup {obj.metadata.namespace}/{name}",
    )
    return None


def _live_clique(pcs: PodCliqueSet, obj: PodClique, on_error: OnError) -> Owner | None:
    metadata = obj.metadata
    part_of = metadata.labels.get(labels.PART_OF, pcs.name)
    try:
        identity = clique_identity(metadata.namespace, part_of, metadata.name, metadata.labels)
        clique_of(pcs, identity)
    except IdentityError as err:
        on_error(metadata.name, str(err))
        return None
    c = pcs.spec.template.clique_index(identity.clique_name)
    assert c is not None, "clique_of found it"
    return _owner(pcs, Level.CLIQUE, c, metadata.name, part_of, metadata.uid, obj.spec.replicas or 0, identity)


def live_owners(
    pcs: PodCliqueSet,
    scaling_groups: Iterable[PodCliqueScalingGroup],
    cliques: Iterable[PodClique],
    on_error: OnError = lambda _name, _message: None,
) -> list[Owner]:
    """The PodCliqueSet and the given scaling groups and PodCliques not being deleted, as owners,
    with replica counts as they say (even negative: what becomes of the claims is the caller's
    decision); one Grove's labels do not place is reported to ``on_error``."""
    found: list[Owner | None] = [_owner(pcs, Level.PODCLIQUESET, 0, pcs.name, pcs.name, pcs.metadata.uid, pcs.spec.replicas)]
    found += [_live_group(pcs, g, on_error) for g in scaling_groups if not g.metadata.deletion_timestamp]
    found += [_live_clique(pcs, c, on_error) for c in cliques if not c.metadata.deletion_timestamp]
    return [owner for owner in found if owner is not None]
