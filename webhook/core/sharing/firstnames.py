"""The first names of a spec's claim-name families and the length of their longest name, found
without making the families (``patterns``).

The validating webhook reads every spec it has not seen, and of the usual spec it needs no more:
first names that are all distinct and hold no number but the open indices' 0s share no name
(``sharednames.apart``), whether they end as DNS-1123 labels is told by the first names, and
whether the names fit after a PodCliqueSet's name by the longest. Only a spec whose first names
do not tell (``claimnames.name_families``) has its families listed. The owners walked are those
of ``owners.places`` with open indices, each named by ``naming``'s formulas at index 0.
"""

from __future__ import annotations

from webhook.core.model.podcliqueset import ALL_REPLICAS, PER_REPLICA, Entries, PodCliqueSetSpec, ScalingGroupConfig
from webhook.core.sharing import naming
from webhook.core.sharing.owners import clique_replicas, group_replicas
from webhook.core.sharing.patterns import PCS_NAME


def first_names(spec: PodCliqueSetSpec) -> tuple[list[str], int]:
    """The first name of every family ``patterns.name_patterns`` gives (each open index 0), in no
    set order, and the bytes the longest name of any family takes. The owners are grouped by kind
    rather than walked in Grove's order, which neither depends on (tests hold the two to the same
    names)."""
    names: list[str] = []
    sizes: list[int] = []
    replicas = max(spec.replicas, 0)
    _entry_names(PCS_NAME, 0, spec.entries, replicas, names, sizes)
    if replicas == 0:  # no replica: no scaling group or PodClique
        return names, max(sizes, default=0)
    extra = naming.extra_digits(replicas) if replicas > 10 else 0
    _standalone_names(spec, extra, names, sizes)
    for group in spec.scaling_groups:
        owner = naming.scaling_group_name(PCS_NAME, 0, group.name)
        replicas = group_replicas(group)
        _entry_names(owner, extra, group.entries, replicas, names, sizes)
        if replicas > 0:
            _member_names(spec, group, owner, extra + (naming.extra_digits(replicas) if replicas > 10 else 0), names, sizes)
    return names, max(sizes, default=0)


def _standalone_names(spec: PodCliqueSetSpec, extra: int, names: list[str], sizes: list[int]) -> None:
    """``first_names`` of the PodCliques outside any scaling group."""
    grouped = {name for group in spec.scaling_groups for name in group.clique_names}
    for clique in spec.cliques:
        if clique.entries and clique.name not in grouped:
            owner = naming.standalone_clique_name(PCS_NAME, 0, clique.name)
            _entry_names(owner, extra, clique.entries, clique_replicas(clique), names, sizes)


def _member_names(
    spec: PodCliqueSetSpec, group: ScalingGroupConfig, owner: str, extra: int, names: list[str], sizes: list[int]
) -> None:
    """``first_names`` of the PodCliques of ``group``, whose first object's name is ``owner``."""
    for name in group.clique_names:
        clique = spec.clique(name)
        if clique is not None and clique.entries:
            member = naming.member_clique_name(owner, 0, clique.name)
            _entry_names(member, extra, clique.entries, clique_replicas(clique), names, sizes)


def _entry_names(owner: str, extra: int, entries: Entries, replicas: int, names: list[str], sizes: list[int]) -> None:
    """``first_names`` of one owner, from its first name, the digits its open indices may add and
    its replicas: each name appended to ``names`` and the bytes its family's longest takes to ``sizes``."""
    each_extra = extra + (naming.extra_digits(replicas) if replicas > 10 else 0)
    for entry in entries:
        name, scope = entry.name, entry.scope
        if name and scope == ALL_REPLICAS:
            first = naming.claim_name(owner, name, None)
            sizes.append(len(first.encode()) + extra)
        elif name and scope == PER_REPLICA and replicas > 0:
            first = naming.claim_name(owner, name, 0)
            sizes.append(len(first.encode()) + each_extra)
        else:
            continue
        names.append(first)
