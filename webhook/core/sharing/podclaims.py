"""Which claims a pod gets, in Grove's order (BEHAVIOUR.md §5.2, §5.3).

A pod is placed by its labels (``placement``); then for each level it belongs to (its
PodCliqueSet, its scaling group if any, its PodClique) it gets that level's AllReplicas claims,
then its PerReplica claims for the pod's replica of that level, skipping entries whose filter
leaves the pod out. The names are those the owners' claims have (``naming``), so a pod always
references the claims the reconciler creates. The pod webhook and the claims command both ask
``pod_claims``.

Every pod of one PodClique gets the same claims but for the clique-level PerReplica ones, which
carry the pod's index and come last.
"""

from __future__ import annotations

from collections.abc import Callable

from webhook.core.model.podcliqueset import ALL_REPLICAS, PER_REPLICA, Entries, PodCliqueSet
from webhook.core.sharing.naming import claim_name
from webhook.core.sharing.placement import CliqueIdentity, clique_of, scaling_group_of


def _level(names: list[str], entries: Entries | None, owner: str, replica: int, clique: str, group: str | None) -> None:
    """The claims of one level a pod of ``clique`` (in ``group``) gets, appended to ``names``: the
    AllReplicas entries its filter leaves the pod in, then the PerReplica ones, of ``replica``."""
    selected = [e for e in entries or () if e.selects(clique, group)]
    names += [claim_name(owner, e.name, None) for e in selected if e.scope == ALL_REPLICAS]
    names += [claim_name(owner, e.name, replica) for e in selected if e.scope == PER_REPLICA]


def pod_claims(pcs: PodCliqueSet, identity: CliqueIdentity, pod_index: Callable[[], int]) -> list[str]:
    """The claim names a pod of the PodClique ``identity`` gets. ``pod_index`` is called only when
    a clique-level PerReplica entry needs it, so a pod without the pod-index label is refused only
    when the label matters (it raises ``IdentityError``, as placing the pod does)."""
    clique = clique_of(pcs, identity)
    group = scaling_group_of(pcs, identity)
    names: list[str] = []
    group_name = None if group is None else group.name
    _level(names, pcs.spec.template.resource_sharing, pcs.name, identity.pcs_replica, clique.name, group_name)
    if group is not None:
        _level(names, group.resource_sharing, identity.scaling_group_fqn, identity.scaling_group_replica, clique.name, None)
    own = clique.resource_sharing or ()
    names += [claim_name(identity.clique_fqn, e.name, None) for e in own if e.scope == ALL_REPLICAS]
    per_pod = [e.name for e in own if e.scope == PER_REPLICA]
    if per_pod:
        index = pod_index()
        names += [claim_name(identity.clique_fqn, name, index) for name in per_pod]
    return names
