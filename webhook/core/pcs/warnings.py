"""Checks beyond Grove (DECISIONS.md §3): problems Grove only meets later, reported at admission.

Grove accepts claim names that pods cannot use and names two owners both generate
(``claimnames``, at the most replicas the spec allows: the autoscalers' ``maxReplicas`` where
set), and filters that select no pod. Each becomes a warning here, or a denial under
``--strict``, in a stable order: claim names first, then filters matching no pod.

Apart from these, and never a denial: an owner whose sharing needs more claims than the claim
reconciler makes for one owner (``--max-claims-per-owner``), counted from the replicas the spec
gives (``limit_warnings``). Replica counts are scale, not mistakes, and the reconciler makes the
first claims and says so on the owner.
"""

from __future__ import annotations

from webhook.core.model.podcliqueset import CliqueTemplate, Entries, PodCliqueSet, PodCliqueSetSpec, ScalingGroupConfig
from webhook.core.pcs.claimnames import name_families, name_warnings
from webhook.core.sharing.desired import claim_count, over_limit
from webhook.core.sharing.owners import planned_owners


def claim_warnings(pcs: PodCliqueSet) -> list[str]:
    return [*name_warnings(pcs.name, name_families(pcs.spec)), *unmatched_filters(pcs.spec)]


def unmatched_filters(spec: PodCliqueSetSpec) -> list[str]:
    """Filters that select no clique of the spec (whatever the replica counts).

    A filter that names nothing, or names a child that does not exist, is already one of Grove's
    errors (F1 to F3, G1, G2) and is not repeated as a warning. What is left: a filter naming only
    existing children none of which has pods, such as a scaling group whose ``cliqueNames`` name no
    clique template (a problem of Grove's wider validation, which this webhook does not run).
    """
    cliques = {c.name for c in spec.cliques}
    groups = {g.name for g in spec.scaling_groups}
    # The names of the pods' cliques and scaling groups: a PodCliqueSet-level filter selects a pod
    # naming either (a group with no clique template has no pods).
    pod_names = cliques | {g.name for g in spec.scaling_groups if not cliques.isdisjoint(g.clique_names)}
    warnings = _unmatched("spec.template.resourceSharing", spec.entries, cliques, groups, pod_names)
    for g, group in enumerate(spec.scaling_groups):
        members = set(group.clique_names)
        source = f"spec.template.podCliqueScalingGroups[{g}].resourceSharing"
        warnings += _unmatched(source, group.entries, members, set(), members & cliques)
    return warnings


def _unmatched(source: str, entries: Entries, cliques: set[str], groups: set[str], pod_names: set[str]) -> list[str]:
    """The entries of one list whose filter names only existing ``cliques`` and ``groups`` but
    selects no pod (names none of ``pod_names``)."""
    warnings = []
    for i, entry in enumerate(entries):
        flt = entry.filter
        if flt is not None and not flt.names_any(pod_names) and flt.names_only(cliques, groups):
            warnings.append(f"{source}[{i}].filter: {MATCHES_NO_POD}")
    return warnings


MATCHES_NO_POD = "matches no pod of this PodCliqueSet"


def most_claims(spec: PodCliqueSetSpec) -> int:
    """At least as many claims as any one owner needs: every entry times the largest replica count."""
    entries, replicas = len(spec.entries), max(1, spec.replicas)
    owners: list[ScalingGroupConfig | CliqueTemplate] = [*spec.scaling_groups, *spec.cliques]
    for owner in owners:
        entries += len(owner.entries)
        replicas = max(replicas, owner.replicas or 1)
    return entries * replicas


def limit_warnings(pcs: PodCliqueSet, limit: int) -> list[str]:
    """Owners needing more than ``limit`` claims at the spec's replicas, one warning per list of
    entries. Every owner made from one list (the PodCliques of one template in every replica)
    needs as many, so the first stands for all and the walk does not grow with the replicas; and a
    spec whose entries times its largest replica count stay within the limit is not walked."""
    if most_claims(pcs.spec) <= limit:
        return []
    warnings: dict[str, str] = {}
    for owner in planned_owners(pcs, lambda count: range(min(count, 1))):
        source = owner.source
        if owner.entries and source not in warnings:
            count = claim_count(owner)
            warnings[source] = f"{source}: {over_limit(owner, count, limit)}" if count > limit else ""
    return [w for w in warnings.values() if w]
