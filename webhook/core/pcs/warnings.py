"""Checks beyond Grove (DECISIONS.md §3): claim names pods cannot use, names two owners both make
(BEHAVIOUR.md §9 items 1, 8, 9) and filters selecting no pod, which Grove only meets later, are
warnings (denials under ``--strict``). Names are checked as families (``sharing.patterns``) at the
autoscalers' ``maxReplicas``: a clique scaled from 9 to 10 must not make its names invalid. An owner
over ``--max-claims-per-owner`` is only ever warned of: replica counts are scale, not mistakes."""

from __future__ import annotations

import re
from collections.abc import Sequence

from webhook.core.gocompat import gojson
from webhook.core.model.podcliqueset import (
    PCSGResourceSharingSpec, PCSResourceSharingSpec, PodCliqueSet, PodCliqueSetSpec,
)
from webhook.core.sharing.desired import claim_count, over_limit
from webhook.core.sharing.owners import most_replicas, planned_owners
from webhook.core.sharing.patterns import (
    MAX_FAMILIES, NamePattern, TooManyFamilies, first_longer_than, may_share, name_patterns, shared_names,
)

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
MAX_LABEL_LENGTH = 63
TOO_LONG = f"must be no more than {MAX_LABEL_LENGTH} characters"
BAD_CHARACTERS = (
    "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
)
MATCHES_NO_POD = "matches no pod of this PodCliqueSet"
MAX_COLLISIONS = 100
"""Collision warnings listed at most, as the API server keeps only a few kilobytes of warnings and
a spec of many cliques of one name would be answered with a warning per pair of them."""
NOT_CHECKED = (
    f"spec.template: claim names not checked: the spec makes more than {MAX_FAMILIES} families of "
    "claim names (owners times entries)"
)
MAX_WARNINGS = 100
"""Invalid-name warnings listed at most (one per entry otherwise)."""
INCOMPLETE = (
    f"spec.template: not every claim-name collision is listed (more than {MAX_COLLISIONS} pairs of "
    "entries, or too many similar names to compare them all)"
)


def claim_warnings(pcs: PodCliqueSet) -> list[str]:
    """Every warning beyond Grove's rules but the claim limit's, in a stable order."""
    try:
        patterns = name_patterns(pcs.spec, most_replicas)
    except TooManyFamilies:  # a spec of millions is answered without them rather than held for seconds
        return [NOT_CHECKED, *unmatched_filters(pcs.spec)]
    return [*invalid_names(pcs.name, patterns), *collisions(pcs.name, patterns), *unmatched_filters(pcs.spec)]


def dns1123_label_problem(name: str) -> str | None:
    """Why a pod could not use ``name`` as a claim name, or None. Length counts bytes, as Go does."""
    if len(name.encode()) > MAX_LABEL_LENGTH:
        return TOO_LONG
    if not _DNS1123_LABEL.fullmatch(name):
        return BAD_CHARACTERS
    return None


def first_invalid(pcs_name: str, pattern: NamePattern) -> tuple[str, str] | None:
    """The first name of a family that is not a DNS-1123 label, with the reason. Indices, digits,
    only make a name invalid by its length: the first name (indices 0) shows every other problem."""
    first = pcs_name + pattern.name()
    problem = dns1123_label_problem(first)
    if problem:
        return first, problem
    if len(pcs_name.encode()) + pattern.longest <= MAX_LABEL_LENGTH:
        return None
    longer = first_longer_than(pattern, MAX_LABEL_LENGTH, pcs_name)
    return (longer, TOO_LONG) if longer else None


def invalid_names(pcs_name: str, patterns: list[NamePattern]) -> list[str]:
    """One warning per entry whose names include one that is not a DNS-1123 label."""
    warnings: dict[str, str] = {}
    for pattern in patterns:
        invalid = None if pattern.source in warnings else first_invalid(pcs_name, pattern)
        if invalid and len(warnings) == MAX_WARNINGS:
            return [*warnings.values(), f"spec.template: only the first {MAX_WARNINGS} entries whose claim names are invalid are listed"]
        if invalid:
            name, problem = invalid
            warnings[pattern.source] = (
                f"{pattern.source}: claim name {gojson.quote(name)} is not a valid DNS-1123 label ({problem}); "
                "pods that reference it will be rejected"
            )
    return list(warnings.values())


def collisions(pcs_name: str, patterns: list[NamePattern]) -> list[str]:
    """Names entries of different lists both make: within one list, a repeated name is Grove's
    Duplicate error, and different names never make the same claim."""
    if not may_share(patterns):
        return []
    firsts: dict[tuple[str, tuple[str | int, ...]], NamePattern] = {}
    for pattern in patterns:
        firsts.setdefault((pattern.list_path, pattern.segments), pattern)
    distinct = list(firsts.values())
    shared = shared_names(distinct)
    found: dict[tuple[str, str], str] = {}
    for a, b, name in shared:
        earlier, later = distinct[a], distinct[b]
        if earlier.list_path == later.list_path or (earlier.source, later.source) in found:
            continue
        if len(found) == MAX_COLLISIONS:
            return [*found.values(), INCOMPLETE]
        found[(earlier.source, later.source)] = (
            f"{later.source}: claim name {gojson.quote(pcs_name + name)} is also generated by {earlier.source}; "
            "the second owner cannot own it and a pod referencing it twice is rejected"
        )
    return [*found.values(), *([] if shared.complete else [INCOMPLETE])]


def unmatched_filters(spec: PodCliqueSetSpec) -> list[str]:
    """Filters naming only existing children without pods (a scaling group whose ``cliqueNames``
    name no template); naming nothing, or a child that does not exist, is Grove's error already."""
    template = spec.template
    cliques = {c.name for c in template.cliques}
    groups = {g.name for g in template.pod_clique_scaling_groups}
    # A PodCliqueSet-level filter selects a pod naming its clique or its scaling group (a group with
    # no clique template has no pods).
    pod_names = cliques | {g.name for g in template.pod_clique_scaling_groups if not cliques.isdisjoint(g.clique_names)}
    warnings = _unmatched("spec.template.resourceSharing", template.resource_sharing or (), cliques, groups, pod_names)
    for g, group in enumerate(template.pod_clique_scaling_groups):
        members = set(group.clique_names)
        source = f"spec.template.podCliqueScalingGroups[{g}].resourceSharing"
        warnings += _unmatched(source, group.resource_sharing or (), members, set(), members & cliques)
    return warnings


def _unmatched(
    source: str, entries: Sequence[PCSResourceSharingSpec | PCSGResourceSharingSpec], cliques: set[str], groups: set[str], pod_names: set[str]
) -> list[str]:
    """Entries whose filter names only existing ``cliques`` and ``groups`` but no ``pod_names``."""
    warnings = []
    for i, entry in enumerate(entries):
        flt = entry.filter
        if flt is None:
            continue
        clique_names, group_names = set(flt.child_clique_names), set(getattr(flt, "child_scaling_group_names", ()))
        names_only = (clique_names or group_names) and clique_names <= cliques and group_names <= groups
        if names_only and (clique_names | group_names).isdisjoint(pod_names):
            warnings.append(f"{source}[{i}].filter: {MATCHES_NO_POD}")
    return warnings


def most_claims(spec: PodCliqueSetSpec) -> int:
    """At least as many claims as any one owner needs: every entry times the largest replica count."""
    template = spec.template
    entries, replicas = len(template.resource_sharing or ()), max(1, spec.replicas)
    for group in template.pod_clique_scaling_groups:
        entries += len(group.resource_sharing or ())
        replicas = max(replicas, group.replicas or 1)
    for clique in template.cliques:
        entries += len(clique.resource_sharing or ())
        replicas = max(replicas, clique.spec.replicas or 1)
    return entries * replicas


def limit_warnings(pcs: PodCliqueSet, limit: int) -> list[str]:
    """Owners needing more than ``limit`` claims, one warning per list: every owner made from a list
    needs as many, so the first stands for all and the walk does not grow with the replicas."""
    if most_claims(pcs.spec) <= limit:
        return []
    warnings: dict[str, str] = {}
    for owner in planned_owners(pcs, lambda count: range(min(count, 1))):
        source = owner.source
        if owner.entries and source not in warnings:
            count = claim_count(owner)
            warnings[source] = f"{source}: {over_limit(owner, count, limit)}" if count > limit else ""
    return [w for w in warnings.values() if w]
