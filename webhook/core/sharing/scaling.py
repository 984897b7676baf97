"""Claim names after a scale: the largest replica counts a spec allows, and one object scaled.

Grove puts replica indices into claim names, so a name that is a valid DNS-1123 label at 9
replicas may be one character too long at 10 (Grove's #660), and a new index may make a name that
another entry already produces. The validating webhook checks the names a spec can reach, not only
those it starts with: ``largest`` gives every clique and scaling group the autoscaler's maximum
where one is set. A scale of one object (``kubectl scale``, an autoscaler writing the ``scale``
subresource) carries only the object's name and its new count: ``place`` finds the PodCliqueSet
and the clique or scaling group it was built from, by Grove's naming (``naming``), and
``scaled_patterns`` gives the names that count makes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from webhook.core.model.projection import PodCliqueSetSharing
from webhook.core.sharing import naming
from webhook.core.sharing.owners import Level, SharingOwner
from webhook.core.sharing.patterns import NamePattern, name_patterns, open_index, owner_patterns


def largest(pcs: PodCliqueSetSharing) -> PodCliqueSetSharing:
    """The spec with each clique and scaling group at the most replicas it can reach: the
    autoscaler's ``maxReplicas`` where one is set and above the template's count."""
    cliques = tuple(
        c._replace(replicas=c.max_replicas) if c.max_replicas is not None and c.max_replicas > max(c.replicas or 0, 1) else c
        for c in pcs.cliques
    )
    groups = tuple(
        g._replace(replicas=g.max_replicas)
        if g.max_replicas is not None and g.max_replicas > (1 if g.replicas is None else g.replicas)
        else g
        for g in pcs.scaling_groups
    )
    return pcs._replace(cliques=cliques, scaling_groups=groups)


class ScaleTarget(NamedTuple):
    """The object a scale writes: its level, name and PodCliqueSet, and the clique template (for a
    PodClique) or scaling-group config (for a scaling group) it was built from."""

    level: Level
    name: str
    pcs: PodCliqueSetSharing
    config: int = -1
    """Index of the clique template or scaling-group config (-1 for the PodCliqueSet)."""

    def patterns(self, replicas: int) -> list[NamePattern]:
        """The names at ``replicas`` that depend on the count (those with an open index): for a
        PodClique its PerReplica claims; for a scaling group its PerReplica claims and every claim
        of its member PodCliques (at their template's replicas); for a PodCliqueSet every claim but
        its own AllReplicas ones."""
        pcs = self.pcs
        if self.level is Level.PODCLIQUESET:
            found = name_patterns(pcs._replace(replicas=replicas))
        elif self.level is Level.CLIQUE:
            found = owner_patterns(_clique(pcs, self.config, self.name), replicas)
        else:
            found = self._group_patterns(replicas)
        return [p for p in found if p.open_sizes()]

    def _group_patterns(self, replicas: int) -> list[NamePattern]:
        pcs, g = self.pcs, self.config
        group = pcs.scaling_groups[g]
        source = f"spec.template.podCliqueScalingGroups[{g}].resourceSharing"
        found = owner_patterns(SharingOwner(Level.SCALING_GROUP, self.name, pcs.name, group.entries, source), replicas)
        if replicas <= 0:
            return found
        for clique_name in group.clique_names:
            c = pcs.clique_index(clique_name)
            if c is not None:
                member = naming.member_clique_name(self.name, open_index(replicas), clique_name)
                found += owner_patterns(_clique(pcs, c, member), max(pcs.cliques[c].replicas or 0, 1))
        return found


def _clique(pcs: PodCliqueSetSharing, c: int, name: str) -> SharingOwner:
    source = f"spec.template.cliques[{c}].resourceSharing"
    return SharingOwner(Level.CLIQUE, name, pcs.name, pcs.cliques[c].entries, source)


Lookup = Callable[[str], PodCliqueSetSharing | None]
"""A PodCliqueSet of the object's namespace by name, or None when unknown."""

_INDEX = re.compile(r"0|[1-9][0-9]*")


def place(level: Level, name: str, lookup: Lookup) -> ScaleTarget | None:
    """The object of that level and name, placed in its PodCliqueSet, or None when no PodCliqueSet
    of the namespace built it. Grove names a scaling group ``<pcs>-<i>-<group>`` and a PodClique
    ``<pcs>-<i>-<clique>`` or ``<pcs>-<i>-<group>-<j>-<clique>``; the PodCliqueSet's name is every
    segment before a replica index, tried shortest first, and the rest must be what that
    PodCliqueSet builds at an index below its replicas."""
    if level is Level.PODCLIQUESET:
        pcs = lookup(name)
        return None if pcs is None else ScaleTarget(level, name, pcs)
    segments = name.split("-")
    for k in range(1, len(segments) - 1):
        if not _INDEX.fullmatch(segments[k]):
            continue
        pcs = lookup("-".join(segments[:k]))
        if pcs is None or len(segments[k]) > len(str(pcs.replicas)) or int(segments[k]) >= pcs.replicas:
            continue
        config = _config(level, name, pcs, int(segments[k]))
        if config is not None:
            return ScaleTarget(level, name, pcs, config)
    return None


def _config(level: Level, name: str, pcs: PodCliqueSetSharing, i: int) -> int | None:
    """The index of the config or template that makes ``name`` in replica ``i`` of the PodCliqueSet."""
    if level is Level.SCALING_GROUP:
        return next((g for g, group in enumerate(pcs.scaling_groups) if naming.scaling_group_name(pcs.name, i, group.name) == name), None)
    members = {m for group in pcs.scaling_groups for m in group.clique_names}
    for c, clique in enumerate(pcs.cliques):
        if clique.name not in members and naming.standalone_clique_name(pcs.name, i, clique.name) == name:
            return c
    for group in pcs.scaling_groups:
        prefix = naming.scaling_group_name(pcs.name, i, group.name) + "-"
        index, _, clique_name = name.removeprefix(prefix).partition("-")
        member = pcs.clique_index(clique_name)
        if name.startswith(prefix) and _INDEX.fullmatch(index) and clique_name in group.clique_names and member is not None:
            return member
    return None

