"""Which claims a pod gets, in Grove's order (BEHAVIOUR.md §5.2, §5.3).

A pod is placed by its labels (``placement``); then for each level it belongs to (its
PodCliqueSet, its scaling group if any, its PodClique) it gets that level's AllReplicas claims,
then its PerReplica claims for the pod's replica of that level, skipping entries whose filter
leaves the pod out. The names are those the owners' claims have (``naming``), so a pod always
references the claims the reconciler creates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from webhook.core.model.podcliqueset import Scope
from webhook.core.model.projection import PodCliqueSetSharing, SharingEntry
from webhook.core.sharing import naming
from webhook.core.sharing.placement import CliqueIdentity, clique_of, scaling_group_of

Level = tuple[str, Sequence[SharingEntry], Callable[[], int], Callable[[SharingEntry], bool]]
"""(owner name, entries, the pod's replica of the owner, whether an entry selects the pod)"""


def claims_for_pod(pcs: PodCliqueSetSharing, identity: CliqueIdentity, pod_index: Callable[[], int]) -> list[str]:
    """The claim names a pod of the PodClique ``identity`` gets.

    ``pod_index`` is called only when a clique-level PerReplica entry needs it, so a pod without the
    pod-index label is refused only when the label matters.
    """
    clique = clique_of(pcs, identity)
    group = scaling_group_of(pcs, identity)
    group_name = None if group is None else group.name
    levels: list[Level] = [(pcs.name, pcs.entries, lambda: identity.pcs_replica, lambda e: e.selects(clique.name, group_name))]
    if group is not None:
        levels.append((identity.scaling_group_fqn, group.entries, lambda: identity.scaling_group_replica, lambda e: e.selects(clique.name)))
    levels.append((identity.clique_fqn, clique.entries, pod_index, lambda _: True))

    names: list[str] = []
    for owner, entries, replica, selects in levels:
        names.extend(naming.claim_name(owner, e.name, None) for e in entries if e.scope == Scope.ALL_REPLICAS and selects(e))
        per_replica = [e for e in entries if e.scope == Scope.PER_REPLICA and selects(e)]
        if per_replica:
            index = replica()
            names.extend(naming.claim_name(owner, e.name, index) for e in per_replica)
    return names
