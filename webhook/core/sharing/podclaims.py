"""Which claims a pod gets, in Grove's order (BEHAVIOUR.md §5.2, §5.3).

A pod is placed by its labels (``placement``); then for each level it belongs to (its
PodCliqueSet, its scaling group if any, its PodClique) it gets that level's AllReplicas claims,
then its PerReplica claims for the pod's replica of that level, skipping entries whose filter
leaves the pod out. The names are those the owners' claims have (``naming``), so a pod always
references the claims the reconciler creates. The pod webhook and the claims command both ask
``pod_claims``.
"""

from __future__ import annotations

from collections.abc import Callable

from webhook.core.model.podcliqueset import Entries, PodCliqueSet, Scope
from webhook.core.sharing.naming import claim_name
from webhook.core.sharing.placement import CliqueIdentity, clique_of, scaling_group_of

ALL_REPLICAS, PER_REPLICA = Scope.ALL_REPLICAS.value, Scope.PER_REPLICA.value


def _level(names: list[str], owner: str, entries: Entries, replica: int, clique: str, group: str | None) -> None:
    """The claims of one level's selected entries, appended: AllReplicas ones, then PerReplica ones."""
    per_replica = []
    for entry in entries:
        if entry.filter is not None and not entry.selects(clique, group):
            continue
        if entry.scope == ALL_REPLICAS:
            names.append(claim_name(owner, entry.name, None))
        elif entry.scope == PER_REPLICA:
            per_replica.append(claim_name(owner, entry.name, replica))
    names += per_replica


def pod_claims(pcs: PodCliqueSet, identity: CliqueIdentity, pod_index: Callable[[], int]) -> list[str]:
    """The claim names a pod of the PodClique ``identity`` gets. ``pod_index`` is called only when a
    clique-level PerReplica entry needs it, so a pod without the pod-index label is refused only
    when the label matters (it raises ``IdentityError``, as placing the pod does)."""
    clique = clique_of(pcs, identity)
    group = scaling_group_of(pcs, identity)
    names: list[str] = []
    _level(names, pcs.name, pcs.spec.entries, identity.pcs_replica, clique.name, None if group is None else group.name)
    if group is not None:
        _level(names, identity.scaling_group_fqn, group.entries, identity.scaling_group_replica, clique.name, None)
    per_pod = any(e.scope == PER_REPLICA for e in clique.entries)
    _level(names, identity.clique_fqn, clique.entries, pod_index() if per_pod else 0, clique.name, None)
    return names
