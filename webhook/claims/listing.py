"""What PodCliqueSets make, offline: the workloads read (each PodCliqueSet with the children given
for it), then each one's claims, its pods' claims and what the validating webhook says, from the
core functions the webhooks and the reconciler use (DECISIONS.md §1).

A child belongs to the PodCliqueSet its ``app.kubernetes.io/part-of`` label names in its namespace;
one whose PodCliqueSet is not among the objects is unusable input, since its claims cannot be
known, and those the reconciler would not count are set aside with a note (DECISIONS.md §5).
Everything is counted before anything is listed, so a spec of two billion replicas is refused with
its counts instead of being listed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webhook.core.gocompat.fielderrors import aggregate
from webhook.core.model import labels
from webhook.core.model.meta import ObjectKey, controller_of
from webhook.core.model.podcliqueset import (
    PodClique, PodCliqueScalingGroup, PodCliqueSet, read_podclique, read_podcliqueset, read_scaling_group,
)
from webhook.core.pcs.rules import validate_create
from webhook.core.pcs.warnings import claim_warnings, limit_warnings
from webhook.core.sharing.desired import DesiredClaim, claim_count, desired_claims
from webhook.core.sharing.owners import Level, Owner, live_owners, planned_owners
from webhook.core.sharing.patterns import planned_size
from webhook.core.sharing.placement import CliqueIdentity, IdentityError, index_below, pod_claims
from webhook.errors import CommandError
from webhook.stores import StoreError
from webhook.stores.manifests import is_grove_object, manifest_objects, read_object

UNUSABLE = 2
Child = PodCliqueScalingGroup | PodClique
Parent = PodCliqueSet | PodCliqueScalingGroup
READERS: dict[str, Callable[[Any], PodCliqueSet | Child]] = {"PodCliqueSet": read_podcliqueset, "PodCliqueScalingGroup": read_scaling_group, "PodClique": read_podclique}


@dataclass(slots=True)
class Workload:
    """One PodCliqueSet and the children given for it."""

    pcs: PodCliqueSet
    groups: list[PodCliqueScalingGroup] = field(default_factory=list)
    cliques: list[PodClique] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Children set aside, one sentence each."""

    @property
    def live(self) -> bool:
        """Whether children were given, whose replica counts replace the template's."""
        return bool(self.groups or self.cliques or self.notes)


def read(paths: Sequence[Path]) -> list[Workload]:
    found = gather(manifest_objects(paths))
    if not found:
        raise CommandError(f"no PodCliqueSet found in {', '.join(map(str, paths))}", UNUSABLE)
    return found


def gather(objects: Iterable[tuple[str, dict[str, Any]]]) -> list[Workload]:
    """The PodCliqueSets among ``objects`` (each with where it was found) with their children, as
    ``claims`` reads them from files and ``status`` from the API server."""
    workloads: dict[ObjectKey, Workload] = {}
    origin: dict[ObjectKey, str] = {}
    children: list[tuple[str, Child]] = []
    try:
        for where, obj in objects:
            kind = next((kind for kind in READERS if is_grove_object(obj, kind)), None)
            if kind is None:
                continue
            found = read_object(READERS[kind], kind, obj, where)
            if not isinstance(found, PodCliqueSet):
                children.append((where, found))
            elif found.key in workloads:
                raise CommandError(f"{where}: PodCliqueSet {found.key} is already defined in {origin[found.key]}", UNUSABLE)
            else:
                workloads[found.key], origin[found.key] = Workload(found), where
    except StoreError as err:
        raise CommandError(str(err), UNUSABLE) from None
    for where, child in children:
        _adopt(workloads, where, child)
    for workload in workloads.values():
        _keep_current(workload)
    return list(workloads.values())


def _describe(obj: PodCliqueSet | Child) -> str:
    return f"{type(obj).__name__} {obj.metadata.namespace}/{obj.metadata.name}"


def _adopt(workloads: dict[ObjectKey, Workload], where: str, child: Child) -> None:
    metadata = child.metadata
    part_of = metadata.labels.get(labels.PART_OF)
    if not part_of:
        raise CommandError(f"{where}: {_describe(child)} has no label {labels.PART_OF} naming its PodCliqueSet", UNUSABLE)
    workload = workloads.get(ObjectKey(metadata.namespace, part_of))
    if workload is None:
        raise CommandError(
            f"{where}: {_describe(child)} belongs to PodCliqueSet {metadata.namespace}/{part_of} (label {labels.PART_OF}), "
            "which none of the files defines",
            UNUSABLE,
        )
    if isinstance(child, PodCliqueScalingGroup):
        workload.groups.append(child)
    else:
        workload.cliques.append(child)


def _keep_current(workload: Workload) -> None:
    """Sets aside, each with a note, the children ``reconciler.cluster.current_children`` would not
    count: a standalone PodClique's parent is the PodCliqueSet, a member's its scaling group."""
    workload.groups = [g for g in workload.groups if not _noted(workload, g, workload.pcs)]
    groups = {g.metadata.name: g for g in workload.groups}
    cliques, workload.cliques = workload.cliques, []
    for clique in cliques:
        group = clique.metadata.labels.get(labels.PCSG)
        if not _noted(workload, clique, workload.pcs if group is None else groups.get(group)):
            workload.cliques.append(clique)


def _noted(workload: Workload, child: Child, parent: Parent | None) -> bool:
    """Whether ``child`` is set aside, why noted."""
    why = _not_current(child, parent)
    if why:
        workload.notes.append(f"{_describe(child)} is not counted: {why}")
    return bool(why)


def _not_current(child: Child, parent: Parent | None) -> str | None:
    """Why a child is not counted, or None: its scaling group not counted (``parent`` None), being
    deleted, controlled by another object than its parent (taken as its parent's when either UID is
    unknown, as in manifests written by hand), or of a replica index the parent no longer has."""
    metadata = child.metadata
    if parent is None:
        return f"its PodCliqueScalingGroup {metadata.namespace}/{metadata.labels[labels.PCSG]} is not among the objects counted"
    controller = controller_of(metadata.owner_references)
    if metadata.deletion_timestamp:
        return "it is being deleted"
    if parent.metadata.uid and controller is not None and controller.uid and controller.uid != parent.metadata.uid:
        return f"its controller is not {_describe(parent)}"
    index_label = labels.PCS_REPLICA_INDEX if isinstance(parent, PodCliqueSet) else labels.PCSG_REPLICA_INDEX
    index, replicas = metadata.labels.get(index_label, ""), max(parent.spec.replicas or 0, 0)
    if not index_below(index, replicas):
        return f"its label {index_label}={index!r} is not a replica index of {_describe(parent)}, which has {replicas} replicas"
    return None


@dataclass(frozen=True, slots=True)
class ListedPod:
    clique: str
    index: int
    claims: list[str]


@dataclass(frozen=True, slots=True)
class Listing:
    """One PodCliqueSet's owners, claims and pods, in owner order, and what the validating webhook says."""

    pcs: PodCliqueSet
    live: bool
    """Whether the replica counts are the objects' (else the spec's)."""
    owners: list[Owner]
    claims: list[DesiredClaim]
    pods: list[ListedPod]
    warnings: list[str]
    denial: str | None
    notes: list[str]


def _natural(owner: Owner) -> list[str | int]:
    """``rs-test-2-sga`` before ``rs-test-10-sga``: digit runs compared as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", owner.name)]


def owners(workload: Workload) -> list[Owner]:
    """The PodCliqueSet first, then the others by name (numbers compared as numbers)."""
    pcs = workload.pcs
    groups = {group.metadata.name for group in workload.groups}

    def unplaced(name: str, message: str) -> None:
        kind = "PodCliqueScalingGroup" if name in groups else "PodClique"
        raise CommandError(f"{kind} {pcs.namespace}/{name} cannot be placed in PodCliqueSet {pcs.name}: {message}", UNUSABLE)

    found = live_owners(pcs, workload.groups, workload.cliques, unplaced) if workload.live else list(planned_owners(pcs))
    return [found[0], *sorted(found[1:], key=_natural)]


def check_sizes(workloads: list[Workload], limit: int) -> None:
    """Refuses, with its counts, the first PodCliqueSet whose claims plus pods, with those of the
    PodCliqueSets before it, are more than ``limit``, or whose owners are (each takes a walk)."""
    used = 0
    for workload in workloads:
        if workload.live:
            found = live_owners(workload.pcs, workload.groups, workload.cliques)
            count, claims = len(found), sum(map(claim_count, found))
            pods = sum(max(o.replicas, 0) for o in found if o.level is Level.CLIQUE)
        else:
            size = planned_size(workload.pcs.spec)
            count, claims, pods = size.owners, size.claims, size.pods
        if used + claims + pods > limit or count > limit:
            counts = "the objects given" if workload.live else f"spec.replicas {workload.pcs.spec.replicas} and the template's replica counts"
            across = f" across {count} owners" if used + claims + pods <= limit else ""
            before = f" besides the {used} of the PodCliqueSets before it" if used else ""
            raise CommandError(
                f"PodCliqueSet {workload.pcs.key} makes {claims} ResourceClaims for {pods} pods{across} (with {counts}){before}: "
                f"more than the limit of {limit} items (--max-items)",
                UNUSABLE,
            )
        used += claims + pods


def _pods(pcs: PodCliqueSet, identity: CliqueIdentity, replicas: int) -> list[ListedPod]:
    """One per replica, each with the claims the pod webhook gives it."""
    try:
        return [ListedPod(identity.clique_fqn, i, pod_claims(pcs, identity, lambda: i)) for i in range(max(replicas, 0))]  # noqa: B023
    except IdentityError as err:
        raise CommandError(f"{identity.key}: its pods cannot be placed: {err}", UNUSABLE) from None


def listing(workload: Workload, limit: int, strict: bool = False) -> Listing:
    """An owner needing more than ``limit`` claims has its first ``limit`` listed, as the reconciler
    makes no more, and the webhook's warning. Under ``strict`` the warnings about claim names and
    filters are part of the denial, as ``serve --strict`` makes them."""
    pcs, found = workload.pcs, owners(workload)
    claims = [claim for owner in found for claim in desired_claims(owner, stop=limit)]
    pods = [pod for owner in found if owner.identity is not None for pod in _pods(pcs, owner.identity, owner.replicas)]
    errors, warnings = [str(e) for e in validate_create(pcs.spec)], claim_warnings(pcs)
    if strict:
        errors, warnings = errors + warnings, []
    return Listing(pcs, workload.live, found, claims, pods, [*warnings, *limit_warnings(pcs, limit)], aggregate(errors), workload.notes)
