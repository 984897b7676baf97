"""What the object stores keep of a PodCliqueSet: its resource sharing, and nothing else.

The pod webhook reads a few hundred bytes of a PodCliqueSet: its name, its cliques and scaling
groups and the resource-sharing entries of each level. A parsed ``PodCliqueSet`` model holds far
more (about 27 KB for the 3.3 KB of Grove's end-to-end workload: nested models, their field sets,
the raw claim templates), and a store holds one per PodCliqueSet of the cluster. So the stores keep
this projection instead, built once as each object arrives: named tuples all the way down (immutable,
about the size of their fields, and quick to build: the validating webhook projects every
PodCliqueSet it checks), with the names that repeat from one PodCliqueSet to the next (entry,
clique and group names, scopes, namespaces) interned so that thousands of PodCliqueSets of one
shape share them.

It keeps the order of every list, so entry indices and "the first clique of that name" mean what
they mean in the spec, and replica counts as the template gives them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import NamedTuple

from webhook.core.model.podcliqueset import (
    AutoScalingConfig,
    PCSGResourceSharingSpec,
    PCSResourceSharingSpec,
    PodCliqueSet,
    ResourceSharingSpec,
)

_intern = sys.intern


def _names(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(map(_intern, names))


class EntryFilter(NamedTuple):
    """An entry's ``filter``: the cliques (and, on the PodCliqueSet level, scaling groups) it names."""

    clique_names: tuple[str, ...] = ()
    scaling_group_names: tuple[str, ...] = ()


class SharingEntry(NamedTuple):
    """One ``resourceSharing`` entry of any level; ``filter`` is None when the entry has none."""

    name: str
    scope: str
    namespace: str = ""
    filter: EntryFilter | None = None

    def selects(self, clique: str, scaling_group: str | None = None) -> bool:
        """Whether the entry's filter leaves a pod of clique ``clique`` (in ``scaling_group``) in
        (BEHAVIOUR.md §5.3). A PodCliqueSet-level filter compares both its lists with both
        names; a scaling group's names only cliques and is asked about the clique alone; an entry
        without a filter selects every pod."""
        flt = self.filter
        if flt is None:
            return True
        names = (clique,) if scaling_group is None else (clique, scaling_group)
        return any(n in flt.clique_names or n in flt.scaling_group_names for n in names)

    @classmethod
    def of(cls, spec: ResourceSharingSpec) -> SharingEntry:
        """The entry of any level: a clique-level entry has no filter, a scaling group's names only
        cliques."""
        entry_filter = None
        if isinstance(spec, PCSResourceSharingSpec) and spec.filter is not None:
            entry_filter = EntryFilter(_names(spec.filter.child_clique_names), _names(spec.filter.child_scaling_group_names))
        elif isinstance(spec, PCSGResourceSharingSpec) and spec.filter is not None:
            entry_filter = EntryFilter(_names(spec.filter.child_clique_names))
        return cls(_intern(spec.name), _intern(spec.scope), _intern(spec.namespace), entry_filter)


def _entries(specs: Iterable[ResourceSharingSpec]) -> tuple[SharingEntry, ...]:
    return tuple(map(SharingEntry.of, specs))


class CliqueSharing(NamedTuple):
    """A clique template: its name, template replicas (None when unset) and entries."""

    name: str
    replicas: int | None
    entries: tuple[SharingEntry, ...]
    max_replicas: int | None = None
    """``spec.autoScalingConfig.maxReplicas``: the most an autoscaler may scale its PodCliques to."""


class ScalingGroupSharing(NamedTuple):
    """A scaling-group config: its name, member cliques, template replicas (None when unset) and entries."""

    name: str
    clique_names: tuple[str, ...]
    replicas: int | None
    entries: tuple[SharingEntry, ...]
    max_replicas: int | None = None
    """``scaleConfig.maxReplicas``: the most an autoscaler may scale the group's objects to."""


class PodCliqueSetSharing(NamedTuple):
    """A PodCliqueSet as far as resource sharing goes: what a store holds for each one."""

    namespace: str
    name: str
    uid: str
    replicas: int
    entries: tuple[SharingEntry, ...]
    cliques: tuple[CliqueSharing, ...]
    scaling_groups: tuple[ScalingGroupSharing, ...]

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    def clique(self, name: str) -> CliqueSharing | None:
        """The first clique template of that name, as Grove's lookup finds it."""
        return next((c for c in self.cliques if c.name == name), None)

    def clique_index(self, name: str) -> int | None:
        """The position of the first clique template of that name (for field paths)."""
        return next((i for i, c in enumerate(self.cliques) if c.name == name), None)


def _most(config: AutoScalingConfig | None) -> int | None:
    return None if config is None else config.max_replicas


def project(pcs: PodCliqueSet) -> PodCliqueSetSharing:
    """The projection of a parsed PodCliqueSet."""
    template = pcs.spec.template
    return PodCliqueSetSharing(
        namespace=_intern(pcs.metadata.namespace),
        name=pcs.metadata.name,
        uid=pcs.metadata.uid,
        replicas=pcs.spec.replicas,
        entries=_entries(template.resource_sharing),
        cliques=tuple(
            CliqueSharing(_intern(c.name), c.spec.replicas, _entries(c.resource_sharing), _most(c.spec.auto_scaling_config))
            for c in template.cliques
        ),
        scaling_groups=tuple(
            ScalingGroupSharing(
                _intern(g.name), _names(g.clique_names), g.replicas, _entries(g.resource_sharing), _most(g.scale_config)
            )
            for g in template.pod_clique_scaling_groups
        ),
    )
