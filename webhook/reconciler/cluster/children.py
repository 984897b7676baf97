"""Which scaling groups and PodCliques are current children of a PodCliqueSet.

Grove deletes the children of removed replicas itself; until those deletions reach the caches,
the objects are still there. Ensuring claims for them would be wasted writes, and worse: the four
watches are separate streams, so the garbage collector's deletion of such a child's claims can
arrive before the child's own deletion, and the reconciler would re-create claims for an owner
that is already gone. So a child counts only while its parent is cached with the UID its
controller reference names, and its replica index is below the parent's current replicas. A
scaling group being deleted is no parent: its PodCliques go with it.
"""

from __future__ import annotations

from collections.abc import Iterable

from webhook.core.model import labels
from webhook.core.model.meta import ObjectMeta, controller_of
from webhook.core.model.children import PodClique, PodCliqueScalingGroup
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.sharing.placement import index_below


def _controller_uid(metadata: ObjectMeta) -> str | None:
    controller = controller_of(metadata.owner_references)
    return controller.uid if controller is not None else None


def _index_below(metadata: ObjectMeta, label: str, replicas: int | None) -> bool:
    return index_below(metadata.labels.get(label, ""), max(replicas or 0, 0))


def current_children(
    pcs: PodCliqueSet, groups: Iterable[PodCliqueScalingGroup], cliques: Iterable[PodClique]
) -> tuple[list[PodCliqueScalingGroup], list[PodClique]]:
    pcs_uid, pcs_replicas = pcs.uid, pcs.spec.replicas
    live_groups = [
        g
        for g in groups
        if _controller_uid(g.metadata) == pcs_uid
        and not g.metadata.deletion_timestamp
        and _index_below(g.metadata, labels.PCS_REPLICA_INDEX, pcs_replicas)
    ]
    by_name = {g.metadata.name: g for g in live_groups}
    return live_groups, [c for c in cliques if _current_clique(c.metadata, pcs, by_name)]


def _current_clique(metadata: ObjectMeta, pcs: PodCliqueSet, groups: dict[str, PodCliqueScalingGroup]) -> bool:
    """Whether a PodClique's parent (its scaling group, else the PodCliqueSet) is current, controls
    it, and still has its replica index."""
    group_name = metadata.labels.get(labels.PCSG)
    if group_name is None:
        return _controller_uid(metadata) == pcs.uid and _index_below(metadata, labels.PCS_REPLICA_INDEX, pcs.spec.replicas)
    group = groups.get(group_name)
    if group is None:
        return False
    return _controller_uid(metadata) == group.metadata.uid and _index_below(metadata, labels.PCSG_REPLICA_INDEX, group.spec.replicas)
