"""The validating webhook for scales (DECISIONS.md §3.3): claim names a new replica count makes, as
a name valid at 9 replicas may be too long at 10 (Grove's #660), or another entry's. A Scale names
only the object: ``place`` finds its PodCliqueSet in the store by Grove's names (one not there is
allowed without a word). A scale down makes no new name, and is never refused."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import NamedTuple, Protocol

from pydantic import Field, TypeAdapter
from pydantic.dataclasses import dataclass

from webhook.core.admission import AdmissionRequest, AdmissionResponse, allowed, decided
from webhook.core.gocompat import gojson
from webhook.core.model.meta import DEFAULT_NAMESPACE, GroupVersionKind, Int32, ObjectMeta, MODEL
from webhook.core.model.podcliqueset import PodCliqueSet, PodCliqueSetSpec
from webhook.core.pcs.warnings import NOT_CHECKED, first_invalid
from webhook.core.sharing import naming
from webhook.core.sharing.naming import OpenIndex, Parts
from webhook.core.sharing.owners import Level, clique_replicas, entries_source, planned_replicas
from webhook.core.sharing.patterns import NamePattern, TooManyFamilies, name_patterns, owner_patterns, shared_names

SCALE = GroupVersionKind("autoscaling", "v1", "Scale")

LEVELS = {
    "podcliques": Level.CLIQUE,
    "podcliquescalinggroups": Level.SCALING_GROUP,
    "podcliquesets": Level.PODCLIQUESET,
}
"""The resources whose ``scale`` subresource the webhook takes, by plural."""
_INDEX = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True, slots=True, config=MODEL)
class ScaleSpec:
    replicas: Int32 = 0


@dataclass(frozen=True, slots=True, config=MODEL)
class Scale:
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ScaleSpec = Field(default_factory=ScaleSpec)


class PodCliqueSetLookup(Protocol):
    def get(self, namespace: str, name: str) -> PodCliqueSet | None:
        """From the object stores' memory, at once."""


class ScaleTarget(NamedTuple):
    """The object a scale writes, placed in its PodCliqueSet."""

    level: Level
    name: str
    pcs: PodCliqueSet
    config: int = -1
    """Index of the clique template or scaling-group config (-1 for the PodCliqueSet)."""

    def patterns(self, replicas: int) -> list[NamePattern]:
        """The names at ``replicas`` that depend on the count (those with an open index)."""
        spec = self.pcs.spec
        if self.level is Level.PODCLIQUESET:

            def scaled(spec: PodCliqueSetSpec, level: Level, template: int) -> int:
                return max(replicas, 0) if level is Level.PODCLIQUESET else planned_replicas(spec, level, template)

            found = name_patterns(spec, scaled)
        elif self.level is Level.CLIQUE:
            entries = spec.template.cliques[self.config].resource_sharing or ()
            found = owner_patterns(self._owner(), entries, entries_source(self.level, self.config), replicas)
        else:
            found = self._group_patterns(replicas)
        return [p for p in found if p.open_sizes()]

    def _owner(self) -> Parts:
        """The object's name after the PodCliqueSet's (``patterns.PCS_NAME`` stands for that)."""
        return (self.name[len(self.pcs.name) :],)

    def _group_patterns(self, replicas: int) -> list[NamePattern]:
        template, g = self.pcs.spec.template, self.config
        group = template.pod_clique_scaling_groups[g]
        found = owner_patterns(self._owner(), group.resource_sharing or (), entries_source(Level.SCALING_GROUP, g), replicas)
        if replicas <= 0:
            return found
        for clique_name in group.clique_names:
            c = template.clique_index(clique_name)
            if c is not None:
                member = naming.member_clique_parts(self._owner(), OpenIndex(replicas), clique_name)
                clique = template.cliques[c]
                found += owner_patterns(member, clique.resource_sharing or (), entries_source(Level.CLIQUE, c), clique_replicas(clique))
        return found


def place(level: Level, name: str, lookup: Callable[[str], PodCliqueSet | None]) -> ScaleTarget | None:
    """The object of that level and name in the PodCliqueSet that built it, if any: that one's name
    is the segments before a replica index (``<pcs>-<i>-...``), tried shortest first, and the rest
    what it builds at an index below its replicas."""
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
    template = pcs.spec.template
    groups = template.pod_clique_scaling_groups
    if level is Level.SCALING_GROUP:
        return next((g for g, group in enumerate(groups) if naming.scaling_group_name(pcs.name, i, group.name) == name), None)
    members = {m for group in groups for m in group.clique_names}
    for c, clique in enumerate(template.cliques):
        if clique.name not in members and naming.standalone_clique_name(pcs.name, i, clique.name) == name:
            return c
    return _member(name, pcs, i)


def _member(name: str, pcs: PodCliqueSet, i: int) -> int | None:
    """The clique template of member PodClique ``name`` of a scaling group in replica ``i``."""
    template = pcs.spec.template
    for group in template.pod_clique_scaling_groups:
        prefix = naming.scaling_group_name(pcs.name, i, group.name) + "-"
        index, _, clique_name = name.removeprefix(prefix).partition("-")
        member = template.clique_index(clique_name)
        if name.startswith(prefix) and _INDEX.fullmatch(index) and clique_name in group.clique_names and member is not None:
            return member
    return None


def scale_warnings(target: ScaleTarget, replicas: int) -> list[str]:
    """Each entry's first name that is no DNS-1123 label, then each pair's first shared name."""
    subject = f"{target.level.kind} {target.name} at {replicas} replicas"
    try:
        scaled = target.patterns(replicas)
        others = name_patterns(target.pcs.spec)
    except TooManyFamilies:
        return [f"{subject}: {NOT_CHECKED.removeprefix('spec.template: ')}"]
    pcs_name = target.pcs.name
    warnings = [f"{subject}: {text}" for text in _invalid(pcs_name, scaled)]
    return warnings + [f"{subject}: {text}" for text in _collisions(pcs_name, scaled, others)]


def _invalid(pcs_name: str, patterns: list[NamePattern]) -> Iterator[str]:
    seen: set[str] = set()
    for pattern in patterns:
        invalid = None if pattern.source in seen else first_invalid(pcs_name, pattern)
        if invalid:
            seen.add(pattern.source)
            name, problem = invalid
            yield (
                f"claim name {gojson.quote(name)} ({pattern.source}) is not a valid DNS-1123 label ({problem}); "
                "pods that reference it will be rejected"
            )


def _collisions(pcs_name: str, scaled: list[NamePattern], others: list[NamePattern]) -> Iterator[str]:
    """Names a scaled pattern shares with a pattern of another list, scaled or not."""
    patterns = scaled + others
    seen: set[tuple[str, str]] = set()
    for a, b, name in shared_names(patterns):
        first, second = patterns[a], patterns[b]
        if a >= len(scaled) or first.list_path == second.list_path or (first.source, second.source) in seen:
            continue
        seen.add((first.source, second.source))
        yield (
            f"claim name {gojson.quote(pcs_name + name)} ({first.source}) is also generated by {second.source}; "
            "the second owner cannot own it and a pod referencing it twice is rejected"
        )


class ScaleValidator:
    """Warns (under ``strict`` denies) of a scale growing into claim names pods cannot use."""

    kind = SCALE
    read = staticmethod(TypeAdapter(Scale).validate_python)

    def __init__(self, store: PodCliqueSetLookup, strict: bool = False) -> None:
        self.store = store
        self.strict = strict

    async def create(self, request: AdmissionRequest, new: Scale) -> AdmissionResponse:
        return allowed()

    async def update(self, request: AdmissionRequest, new: Scale, old: Scale | None) -> AdmissionResponse:
        level = LEVELS.get(request.resource.resource)
        if request.sub_resource != "scale" or level is None or (old is not None and new.spec.replicas <= old.spec.replicas):
            return allowed()
        namespace = request.namespace or new.metadata.namespace or DEFAULT_NAMESPACE
        target = place(level, request.name or new.metadata.name, lambda name: self.store.get(namespace, name))
        warnings = [] if target is None else scale_warnings(target, new.spec.replicas)
        return decided(warnings) if self.strict else allowed(warnings)

    async def delete(self, request: AdmissionRequest, old: Scale | None) -> AdmissionResponse:
        return allowed()
