"""Checks beyond Grove (DECISIONS.md §3): problems Grove only meets later, reported at admission.

Grove accepts claim names that pods cannot use (over 63 characters, or not a DNS-1123 label), names
that two owners both generate (BEHAVIOUR.md §9 items 1 and 8) and filters that select no
pod. Each becomes a warning here, or a denial under ``--strict``. The names are those the claim
reconciler would create for the spec at the most replicas it allows (the autoscalers'
``maxReplicas`` where set), taken as families (``claimpatterns``) so that the
cost does not grow with the replica counts and no collision is missed.

Warnings come in a stable order: invalid names (one per entry, its first invalid name), then
collisions (one per pair of entries, the first shared name), then filters matching no pod.

Apart from these, and never a denial: an owner whose sharing needs more claims than the claim
reconciler makes for one owner (``--max-claims-per-owner``), counted from the replicas the spec
gives (``limit_warnings``). Replica counts are scale, not mistakes, and the reconciler makes the
first claims and says so on the owner.
"""

from __future__ import annotations

import re

from webhook.core.gocompat import gojson
from webhook.core.model.projection import PodCliqueSetSharing
from webhook.core.sharing.desired import claim_count, over_limit
from webhook.core.sharing.owners import planned_owners
from webhook.core.sharing.patterns import (
    NamePattern,
    first_longer_than,
    name_patterns,
    shared_names,
)
from webhook.core.sharing.scaling import largest

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
MAX_LABEL_LENGTH = 63
TOO_LONG = f"must be no more than {MAX_LABEL_LENGTH} characters"
BAD_CHARACTERS = (
    "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
)


def dns1123_label_problem(name: str) -> str | None:
    """Why a pod could not use ``name`` as a claim name, or None. Length counts bytes, as Go does."""
    if len(name.encode()) > MAX_LABEL_LENGTH:
        return TOO_LONG
    if not _DNS1123_LABEL.fullmatch(name):
        return BAD_CHARACTERS
    return None


def claim_warnings(pcs: PodCliqueSetSharing) -> list[str]:
    """Names are checked at the most replicas each owner can reach (``scaling.largest``): an
    autoscaler scaling a clique from 9 to 10 replicas must not make its names invalid."""
    patterns = name_patterns(largest(pcs))
    return [*_invalid_names(patterns), *_collisions(patterns), *_unmatched_filters(pcs)]


def first_invalid(pattern: NamePattern) -> tuple[str, str] | None:
    """The first name of a family that is not a DNS-1123 label, with the reason. Indices are digits,
    which never make a name invalid except by its length, so the first name (all indices 0) shows
    every other problem."""
    first = pattern.first_name()
    problem = dns1123_label_problem(first)
    if problem:
        return first, problem
    longer = first_longer_than(pattern, MAX_LABEL_LENGTH, first)
    return (longer, TOO_LONG) if longer else None


def _invalid_names(patterns: list[NamePattern]) -> list[str]:
    warnings: dict[str, str] = {}
    for pattern in patterns:
        if pattern.source in warnings:
            continue
        invalid = first_invalid(pattern)
        if invalid:
            name, problem = invalid
            warnings[pattern.source] = (
                f"{pattern.source}: claim name {gojson.quote(name)} is not a valid DNS-1123 label ({problem}); "
                "pods that reference it will be rejected"
            )
    return list(warnings.values())


MAX_COLLISIONS = 100
"""Collision warnings listed at most; one more says the list is cut. The API server keeps only the
first few kilobytes of a response's warnings anyway, and a spec of many cliques of one name would
otherwise be answered with a warning per pair of them."""
INCOMPLETE = (
    f"spec.template: not every claim-name collision is listed (more than {MAX_COLLISIONS} pairs of "
    "entries, or too many similar names to compare them all)"
)


def _collisions(patterns: list[NamePattern]) -> list[str]:
    """Names two entries of different lists both generate. Within one list a repeated name is
    already Grove's Duplicate error (so only its first entry is compared with other lists), and
    different names in one list never produce the same claim."""
    firsts: dict[tuple[str, str], NamePattern] = {}
    for pattern in patterns:
        firsts.setdefault((pattern.list_path, pattern.text), pattern)
    distinct = list(firsts.values())
    shared = shared_names(distinct)
    warnings: dict[tuple[str, str], str] = {}
    for a, b, name in shared:
        earlier, later = distinct[a], distinct[b]
        if earlier.list_path == later.list_path or (earlier.source, later.source) in warnings:
            continue
        if len(warnings) == MAX_COLLISIONS:
            return [*warnings.values(), INCOMPLETE]
        warnings[(earlier.source, later.source)] = (
            f"{later.source}: claim name {gojson.quote(name)} is also generated by {earlier.source}; "
            "the second owner cannot own it and a pod referencing it twice is rejected"
        )
    return [*warnings.values()] if shared.complete else [*warnings.values(), INCOMPLETE]


def _unmatched_filters(pcs: PodCliqueSetSharing) -> list[str]:
    """Filters that select no clique of the spec (whatever the replica counts).

    A filter that names nothing, or names a child that does not exist, is already one of Grove's
    errors (F1 to F3, G1, G2) and is not repeated as a warning. What is left: a filter naming only
    existing children none of which has pods, such as a scaling group whose ``cliqueNames`` name no
    clique template (a problem of Grove's wider validation, which this webhook does not run).
    """
    cliques = {c.name for c in pcs.cliques}
    groups = {g.name for g in pcs.scaling_groups}
    group_of = {name: g.name for g in pcs.scaling_groups for name in g.clique_names if name in cliques}
    warnings = []
    for i, entry in enumerate(pcs.entries):
        flt = entry.filter
        if flt is None or not (flt.clique_names or flt.scaling_group_names):
            continue
        if not cliques.issuperset(flt.clique_names) or not groups.issuperset(flt.scaling_group_names):
            continue
        if not any(entry.selects(c, group_of.get(c)) for c in cliques):
            warnings.append(f"spec.template.resourceSharing[{i}].filter: matches no pod of this PodCliqueSet")
    for g, group in enumerate(pcs.scaling_groups):
        members = [c for c in group.clique_names if c in cliques]
        for i, group_entry in enumerate(group.entries):
            named = group_entry.filter.clique_names if group_entry.filter is not None else ()
            if not named or not set(group.clique_names).issuperset(named):
                continue
            if not any(group_entry.selects(c) for c in members):
                warnings.append(
                    f"spec.template.podCliqueScalingGroups[{g}].resourceSharing[{i}].filter: "
                    "matches no pod of this PodCliqueSet"
                )
    return warnings


def _most_claims(pcs: PodCliqueSetSharing) -> int:
    """At least as many claims as any one owner needs: every entry times the largest replica count."""
    entries = len(pcs.entries) + sum(len(g.entries) for g in pcs.scaling_groups) + sum(len(c.entries) for c in pcs.cliques)
    replicas = max([1, pcs.replicas, *(g.replicas or 1 for g in pcs.scaling_groups), *(c.replicas or 1 for c in pcs.cliques)])
    return entries * replicas


def limit_warnings(pcs: PodCliqueSetSharing, limit: int) -> list[str]:
    """Owners needing more than ``limit`` claims at the spec's replicas, one warning per list of
    entries. Every owner made from one list (the PodCliques of one template in every replica)
    needs as many, so the first stands for all and the walk does not grow with the replicas; and a
    spec whose entries times its largest replica count stay within the limit is not walked."""
    if _most_claims(pcs) <= limit:
        return []
    warnings: dict[str, str] = {}
    for owned in planned_owners(pcs, lambda count: range(min(count, 1))):
        source = owned.owner.source
        if owned.owner.entries and source not in warnings:
            count = claim_count(owned)
            warnings[source] = f"{source}: {over_limit(owned, count, limit)}" if count > limit else ""
    return [w for w in warnings.values() if w]
