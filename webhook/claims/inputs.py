"""What ``webhook claims`` reads: PodCliqueSets and, when given, the children that exist now.

Files are read as ``serve --objects`` reads them (``stores.manifests``). A PodCliqueSet, scaling
group or PodClique without a namespace is in ``default``, as ``kubectl apply`` would put it. A child
belongs to the PodCliqueSet its ``app.kubernetes.io/part-of`` label names in its namespace; one
whose PodCliqueSet is not among the files is unusable input, since its claims cannot be known.

Of the children given, those the reconciler would not count are set aside with a note (BEHAVIOUR.md
§4.8 and DECISIONS.md §5): being deleted, controlled by another object (when both UIDs are known),
or of a replica index the parent no longer has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from webhook.core.model import labels
from webhook.core.model.children import PodClique, PodCliqueScalingGroup, read_podclique, read_scaling_group
from webhook.core.model.meta import ObjectKey, ObjectMeta, controller_of
from webhook.core.model.podcliqueset import PodCliqueSet, read_podcliqueset
from webhook.core.sharing.placement import index_below
from webhook.errors import CommandError
from webhook.stores.base import StoreError
from webhook.stores.manifests import is_grove_object, manifest_objects, read_object

UNUSABLE = 2

ModelT = TypeVar("ModelT", PodCliqueSet, PodCliqueScalingGroup, PodClique)


@dataclass(slots=True)
class Workload:
    """One PodCliqueSet and the children given for it."""

    pcs: PodCliqueSet
    groups: list[PodCliqueScalingGroup] = field(default_factory=list)
    cliques: list[PodClique] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Children set aside, one sentence each."""

    @property
    def key(self) -> ObjectKey:
        return self.pcs.key

    @property
    def live(self) -> bool:
        """Whether children were given: their replica counts replace the template's."""
        return bool(self.groups or self.cliques or self.notes)


def _read(read: Callable[[Any], ModelT], kind: str, obj: dict[str, Any], where: str) -> ModelT:
    try:
        return read_object(read, kind, obj, where)
    except StoreError as err:
        raise CommandError(str(err), UNUSABLE) from None


def _describe(kind: str, metadata: ObjectMeta) -> str:
    return f"{kind} {metadata.namespace}/{metadata.name}"


def read(paths: Sequence[Path]) -> list[Workload]:
    """The PodCliqueSets of ``paths`` in the order found, each with its children."""
    try:
        found = gather(manifest_objects(paths))
    except StoreError as err:
        raise CommandError(str(err), UNUSABLE) from None
    if not found:
        raise CommandError(f"no PodCliqueSet found in {', '.join(map(str, paths))}", UNUSABLE)
    return found


def gather(objects: Iterable[tuple[str, dict[str, Any]]]) -> list[Workload]:
    """The PodCliqueSets among ``objects`` (each with where it was found), with their children set
    aside as the reconciler would count them: what ``claims`` reads from files and ``status`` from
    the API server."""
    workloads: dict[ObjectKey, Workload] = {}
    origin: dict[ObjectKey, str] = {}
    children: list[tuple[str, PodCliqueScalingGroup | PodClique]] = []
    for where, obj in objects:
        if is_grove_object(obj, "PodCliqueSet"):
            workload = Workload(_read(read_podcliqueset, "PodCliqueSet", obj, where))
            if workload.key in workloads:
                raise CommandError(f"{where}: PodCliqueSet {workload.key} is already defined in {origin[workload.key]}", UNUSABLE)
            workloads[workload.key], origin[workload.key] = workload, where
        elif is_grove_object(obj, "PodCliqueScalingGroup"):
            children.append((where, _read(read_scaling_group, "PodCliqueScalingGroup", obj, where)))
        elif is_grove_object(obj, "PodClique"):
            children.append((where, _read(read_podclique, "PodClique", obj, where)))
    for where, child in children:
        _adopt(workloads, where, child)
    for workload in workloads.values():
        _keep_current(workload)
    return list(workloads.values())


def _adopt(workloads: dict[ObjectKey, Workload], where: str, child: PodCliqueScalingGroup | PodClique) -> None:
    metadata = child.metadata
    what = _describe(type(child).__name__, metadata)
    part_of = metadata.labels.get(labels.PART_OF)
    if not part_of:
        raise CommandError(f"{where}: {what} has no label {labels.PART_OF} naming its PodCliqueSet", UNUSABLE)
    workload = workloads.get(ObjectKey(metadata.namespace, part_of))
    if workload is None:
        raise CommandError(
            f"{where}: {what} belongs to PodCliqueSet {metadata.namespace}/{part_of} (label {labels.PART_OF}), "
            "which none of the files defines",
            UNUSABLE,
        )
    if isinstance(child, PodCliqueScalingGroup):
        workload.groups.append(child)
    else:
        workload.cliques.append(child)


def _controlled_by(metadata: ObjectMeta, uid: str) -> bool:
    """Whether the object's controller is the parent of ``uid``; taken as so when either UID is
    unknown (manifests written by hand have none)."""
    controller = controller_of(metadata.owner_references)
    return not uid or controller is None or not controller.uid or controller.uid == uid


def _keep_current(workload: Workload) -> None:
    """Sets aside the children the reconciler would not count (``reconciler.cluster.children``)."""
    pcs, pcs_replicas = workload.pcs, max(workload.pcs.spec.replicas, 0)
    owner = f"PodCliqueSet {pcs.key}"
    groups: list[PodCliqueScalingGroup] = []
    for group in workload.groups:
        why = _not_current(group.metadata, pcs.uid, labels.PCS_REPLICA_INDEX, pcs_replicas, owner)
        if why:
            workload.notes.append(f"{_describe('PodCliqueScalingGroup', group.metadata)} is not counted: {why}")
        else:
            groups.append(group)
    by_name = {g.metadata.name: g for g in groups}
    cliques: list[PodClique] = []
    for clique in workload.cliques:
        group_name = clique.metadata.labels.get(labels.PCSG)
        if group_name is None:
            why = _not_current(clique.metadata, pcs.uid, labels.PCS_REPLICA_INDEX, pcs_replicas, owner)
        elif (parent := by_name.get(group_name)) is None:
            why = f"its PodCliqueScalingGroup {clique.metadata.namespace}/{group_name} is not among the objects counted"
        else:
            replicas = max(parent.spec.replicas or 0, 0)
            parent_name = _describe(type(parent).__name__, parent.metadata)
            why = _not_current(clique.metadata, parent.metadata.uid, labels.PCSG_REPLICA_INDEX, replicas, parent_name)
        if why:
            workload.notes.append(f"{_describe('PodClique', clique.metadata)} is not counted: {why}")
        else:
            cliques.append(clique)
    workload.groups, workload.cliques = groups, cliques


def _not_current(metadata: ObjectMeta, parent_uid: str, index_label: str, replicas: int, parent: str) -> str | None:
    if metadata.deletion_timestamp:
        return "it is being deleted"
    if not _controlled_by(metadata, parent_uid):
        return f"its controller is not {parent}"
    index = metadata.labels.get(index_label, "")
    if not index_below(index, replicas):
        return f"its label {index_label}={index!r} is not a replica index of {parent}, which has {replicas} replicas"
    return None
