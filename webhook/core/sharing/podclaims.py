"""Which claims a pod gets, in Grove's order (BEHAVIOUR.md §5.2, §5.3).

A pod is placed by its labels (``placement``); then for each level it belongs to (its
PodCliqueSet, its scaling group if any, its PodClique) it gets that level's AllReplicas claims,
then its PerReplica claims for the pod's replica of that level, skipping entries whose filter
leaves the pod out. The names are those the owners' claims have (``naming``), so a pod always
references the claims the reconciler creates. The pod webhook and the claims command both ask
``pod_claims``.

Every pod of one PodClique gets the same claims but for the clique-level PerReplica ones, which
carry the pod's index and come last (``PodCliqueClaims``): a caller may find a PodClique's once
(``podclique_claims``) and each pod's from them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from webhook.core.model.podcliqueset import ALL_REPLICAS, PER_REPLICA, Entries, PodCliqueSet
from webhook.core.sharing.naming import claim_name
from webhook.core.sharing.placement import CliqueIdentity, clique_of, scaling_group_of


class LevelClaims(NamedTuple):
    """The entries of one level a pod gets a claim of: AllReplicas ones, then PerReplica ones."""

    all_replicas: tuple[str, ...] = ()
    per_replica: tuple[str, ...] = ()

    def names(self, names: list[str], owner: str, replica: int) -> None:
        """The claims of ``owner`` and its replica ``replica``, appended."""
        names += [claim_name(owner, entry, None) for entry in self.all_replicas]
        names += [claim_name(owner, entry, replica) for entry in self.per_replica]


def _level(entries: Entries | None, clique: str, group: str | None) -> LevelClaims:
    selected = [e for e in entries or () if e.selects(clique, group)]
    return LevelClaims(
        tuple(e.name for e in selected if e.scope == ALL_REPLICAS), tuple(e.name for e in selected if e.scope == PER_REPLICA)
    )


class PodCliqueClaims(NamedTuple):
    """The claims of every pod of one PodClique: ``shared`` by all, then one per ``per_pod`` entry
    for the pod's index."""

    clique_fqn: str
    shared: tuple[str, ...]
    per_pod: tuple[str, ...]
    """Names of the clique-level PerReplica entries."""

    def of_pod(self, pod_index: Callable[[], int]) -> list[str]:
        """The pod's claims. ``pod_index`` is called only when a clique-level PerReplica entry needs
        it, so a pod without the pod-index label is refused only when the label matters (it raises
        ``IdentityError``, as placing the pod does)."""
        if not self.per_pod:
            return list(self.shared)
        index = pod_index()
        return [*self.shared, *[claim_name(self.clique_fqn, entry, index) for entry in self.per_pod]]


def podclique_claims(pcs: PodCliqueSet, identity: CliqueIdentity) -> PodCliqueClaims:
    """The claims the pods of the PodClique ``identity`` get."""
    clique = clique_of(pcs, identity)
    group = scaling_group_of(pcs, identity)
    shared: list[str] = []
    pcs_entries = pcs.spec.template.resource_sharing
    _level(pcs_entries, clique.name, None if group is None else group.name).names(shared, pcs.name, identity.pcs_replica)
    if group is not None:
        _level(group.resource_sharing, clique.name, None).names(shared, identity.scaling_group_fqn, identity.scaling_group_replica)
    own = _level(clique.resource_sharing, clique.name, None)
    own._replace(per_replica=()).names(shared, identity.clique_fqn, 0)
    return PodCliqueClaims(identity.clique_fqn, tuple(shared), own.per_replica)


def pod_claims(pcs: PodCliqueSet, identity: CliqueIdentity, pod_index: Callable[[], int]) -> list[str]:
    """The claim names a pod of the PodClique ``identity`` gets."""
    return podclique_claims(pcs, identity).of_pod(pod_index)
