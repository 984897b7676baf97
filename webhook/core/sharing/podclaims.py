"""Which claims a pod gets, in Grove's order (BEHAVIOUR.md §5.2, §5.3).

A pod is placed by its labels (``placement``); then for each level it belongs to (its
PodCliqueSet, its scaling group if any, its PodClique) it gets that level's AllReplicas claims,
then its PerReplica claims for the pod's replica of that level, skipping entries whose filter
leaves the pod out. The names are those the owners' claims have (``naming``), so a pod always
references the claims the reconciler creates.

Every pod of one PodClique gets the same claims but for the clique-level PerReplica ones, which
carry the pod's index and come last: ``PodClaims`` holds the two parts apart, so the pods of a
PodClique share one (``PodClaimsCache``) and a pod costs only its own names.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from webhook.core.model.podcliqueset import Scope
from webhook.core.model.projection import PodCliqueSetSharing, SharingEntry
from webhook.core.sharing import naming
from webhook.core.sharing.placement import CliqueIdentity, clique_of, scaling_group_of


@dataclass(frozen=True, slots=True)
class PodClaims:
    """The claims of every pod of one PodClique: ``shared`` by all, then one per ``per_pod`` entry
    for the pod's index."""

    clique_fqn: str
    shared: tuple[str, ...]
    per_pod: tuple[str, ...]
    """Names of the clique-level PerReplica entries."""

    def of_pod(self, pod_index: Callable[[], int]) -> list[str]:
        """The pod's claims. ``pod_index`` is called only when a clique-level PerReplica entry needs
        it, so a pod without the pod-index label is refused only when the label matters."""
        if not self.per_pod:
            return list(self.shared)
        index = pod_index()
        return [*self.shared, *(naming.claim_name(self.clique_fqn, name, index) for name in self.per_pod)]


def _level(owner: str, entries: Sequence[SharingEntry], replica: int, selects: Callable[[SharingEntry], bool]) -> list[str]:
    names = [naming.claim_name(owner, e.name, None) for e in entries if e.scope == Scope.ALL_REPLICAS and selects(e)]
    return names + [naming.claim_name(owner, e.name, replica) for e in entries if e.scope == Scope.PER_REPLICA and selects(e)]


def pod_claims(pcs: PodCliqueSetSharing, identity: CliqueIdentity) -> PodClaims:
    """The claims the pods of the PodClique ``identity`` get."""
    clique = clique_of(pcs, identity)
    group = scaling_group_of(pcs, identity)
    group_name = None if group is None else group.name
    shared = _level(pcs.name, pcs.entries, identity.pcs_replica, lambda e: e.selects(clique.name, group_name))
    if group is not None:
        shared += _level(identity.scaling_group_fqn, group.entries, identity.scaling_group_replica, lambda e: e.selects(clique.name))
    shared += [naming.claim_name(identity.clique_fqn, e.name, None) for e in clique.entries if e.scope == Scope.ALL_REPLICAS]
    per_pod = tuple(e.name for e in clique.entries if e.scope == Scope.PER_REPLICA)
    return PodClaims(identity.clique_fqn, tuple(shared), per_pod)


def claims_for_pod(pcs: PodCliqueSetSharing, identity: CliqueIdentity, pod_index: Callable[[], int]) -> list[str]:
    """The claim names a pod of the PodClique ``identity`` gets."""
    return pod_claims(pcs, identity).of_pod(pod_index)


class PodClaimsCache:
    """``pod_claims`` remembered per PodClique, for as long as the store holds the same projection
    of its PodCliqueSet (a changed PodCliqueSet is a new projection, so nothing stale is served)."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._found: OrderedDict[CliqueIdentity, tuple[PodCliqueSetSharing, PodClaims]] = OrderedDict()

    def claims(self, pcs: PodCliqueSetSharing, identity: CliqueIdentity) -> PodClaims:
        found = self._found.get(identity)
        if found is not None and found[0] is pcs:
            self._found.move_to_end(identity)
            return found[1]
        claims = pod_claims(pcs, identity)
        self._found[identity] = (pcs, claims)
        if len(self._found) > self.size:
            self._found.popitem(last=False)
        return claims
