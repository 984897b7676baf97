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

from msgspec.structs import replace

from webhook.core.model.podcliqueset import CliqueTemplate, PodCliqueSet, PodCliqueSetSpec, ScalingGroupConfig
from webhook.core.sharing import naming
from webhook.core.sharing.naming import OpenIndex, Parts
from webhook.core.sharing.owners import Level, entries_source
from webhook.core.sharing.patterns import NamePattern, name_patterns, owner_patterns


def _most_clique(c: CliqueTemplate) -> CliqueTemplate:
    above = c.max_replicas is not None and c.max_replicas > max(c.replicas or 0, 1)
    return replace(c, replicas=c.max_replicas) if above else c


def _most_group(g: ScalingGroupConfig) -> ScalingGroupConfig:
    above = g.max_replicas is not None and g.max_replicas > g.template_replicas()
    return replace(g, replicas=g.max_replicas) if above else g


def largest(spec: PodCliqueSetSpec) -> PodCliqueSetSpec:
    """The spec with each clique and scaling group at the most replicas it can reach: the
    autoscaler's ``maxReplicas`` where one is set and above the template's count."""
    owners: tuple[CliqueTemplate | ScalingGroupConfig, ...] = (*spec.cliques, *spec.scaling_groups)
    for owner in owners:
        if owner.max_replicas is not None:
            cliques, groups = tuple(map(_most_clique, spec.cliques)), tuple(map(_most_group, spec.scaling_groups))
            return replace(spec, cliques=cliques, scaling_groups=groups)
    return spec


class ScaleTarget(NamedTuple):
    """The object a scale writes: its level, name and PodCliqueSet, and the clique template (for a
    PodClique) or scaling-group config (for a scaling group) it was built from."""

    level: Level
    name: str
    pcs: PodCliqueSet
    config: int = -1
    """Index of the clique template or scaling-group config (-1 for the PodCliqueSet)."""

    def patterns(self, replicas: int) -> list[NamePattern]:
        """The names at ``replicas`` that depend on the count (those with an open index), after
        the PodCliqueSet's name as every spec pattern: for a PodClique its PerReplica claims; for a
        scaling group its PerReplica claims and every claim of its member PodCliques (at their
        template's replicas); for a PodCliqueSet every claim but its own AllReplicas ones."""
        spec = self.pcs.spec
        if self.level is Level.PODCLIQUESET:
            found = name_patterns(replace(spec, replicas=replicas))
        elif self.level is Level.CLIQUE:
            found = owner_patterns(self._owner(), spec.cliques[self.config].entries, entries_source(self.level, self.config), replicas)
        else:
            found = self._group_patterns(replicas)
        return [p for p in found if p.open_sizes()]

    def _owner(self) -> Parts:
        """The object's name after the PodCliqueSet's (``patterns.PCS_NAME`` stands for that)."""
        return (self.name[len(self.pcs.name) :],)

    def _group_patterns(self, replicas: int) -> list[NamePattern]:
        spec, g = self.pcs.spec, self.config
        group = spec.scaling_groups[g]
        found = owner_patterns(self._owner(), group.entries, entries_source(Level.SCALING_GROUP, g), replicas)
        if replicas <= 0:
            return found
        for clique_name in group.clique_names:
            c = spec.clique_index(clique_name)
            if c is not None:
                member = naming.member_clique_parts(self._owner(), OpenIndex(replicas), clique_name)
                clique = spec.cliques[c]
                found += owner_patterns(member, clique.entries, entries_source(Level.CLIQUE, c), max(clique.replicas or 0, 1))
        return found


Lookup = Callable[[str], PodCliqueSet | None]
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
        replicas = 0 if pcs is None else pcs.spec.replicas
        if pcs is None or len(segments[k]) > len(str(replicas)) or int(segments[k]) >= replicas:
            continue
        config = _config(level, name, pcs, int(segments[k]))
        if config is not None:
            return ScaleTarget(level, name, pcs, config)
    return None


def _config(level: Level, name: str, pcs: PodCliqueSet, i: int) -> int | None:
    """The index of the config or template that makes ``name`` in replica ``i`` of the PodCliqueSet."""
    spec = pcs.spec
    if level is Level.SCALING_GROUP:
        return next((g for g, group in enumerate(spec.scaling_groups) if naming.scaling_group_name(pcs.name, i, group.name) == name), None)
    members = {m for group in spec.scaling_groups for m in group.clique_names}
    for c, clique in enumerate(spec.cliques):
        if clique.name not in members and naming.standalone_clique_name(pcs.name, i, clique.name) == name:
            return c
    return _member(name, pcs, i)


def _member(name: str, pcs: PodCliqueSet, i: int) -> int | None:
    """The clique template of member PodClique ``name`` of a scaling group in replica ``i``."""
    spec = pcs.spec
    for group in spec.scaling_groups:
        prefix = naming.scaling_group_name(pcs.name, i, group.name) + "-"
        index, _, clique_name = name.removeprefix(prefix).partition("-")
        member = spec.clique_index(clique_name)
        if name.startswith(prefix) and _INDEX.fullmatch(index) and clique_name in group.clique_names and member is not None:
            return member
    return None
