"""A second, independent reading of which claims a spec produces: the oracle the name patterns and
the owner walk are checked against. It walks the JSON as sent, not the model the webhooks read, and lists every
owner and every replica, so it is only fit for the small random specs of the tests."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from webhook.core.sharing.owners import Owner
from webhook.core.sharing.placement import index_below


def _owner(name: str, entries: list[dict[str, Any]] | None, source: str, replicas: int) -> Iterator[tuple[str, str]]:
    """(entry field path, claim name) of one owner: AllReplicas entries, then PerReplica ones per replica."""
    entries = entries or []
    for i, entry in enumerate(entries):
        if entry.get("scope") == "AllReplicas" and entry.get("name"):
            yield f"{source}[{i}]", f"{name}-all-{entry['name']}"
    for replica in range(replicas):
        for i, entry in enumerate(entries):
            if entry.get("scope") == "PerReplica" and entry.get("name"):
                yield f"{source}[{i}]", f"{name}-{replica}-{entry['name']}"


def claim_names(raw: dict[str, Any]) -> dict[str, set[str]]:
    """Entry field path to every claim name the owners Grove builds from the spec give it."""
    spec, name = raw.get("spec", {}), raw.get("metadata", {}).get("name", "")
    template = spec.get("template", {})
    cliques, groups = template.get("cliques") or [], template.get("podCliqueScalingGroups") or []
    pcs_replicas = max(spec.get("replicas", 0), 0)
    found: dict[str, set[str]] = {}

    def add(owner: str, entries: list[dict[str, Any]] | None, source: str, replicas: int) -> None:
        for path, claim in _owner(owner, entries, source, replicas):
            found.setdefault(path, set()).add(claim)

    def clique_replicas(clique: dict[str, Any]) -> int:
        return max(clique.get("spec", {}).get("replicas") or 0, 1)

    add(name, template.get("resourceSharing"), "spec.template.resourceSharing", pcs_replicas)
    members = {n for g in groups for n in g.get("cliqueNames") or []}
    for i in range(pcs_replicas):
        for c, clique in enumerate(cliques):
            if clique["name"] not in members:
                add(f"{name}-{i}-{clique['name']}", clique.get("resourceSharing"), f"spec.template.cliques[{c}].resourceSharing", clique_replicas(clique))
        for g, group in enumerate(groups):
            group_name = f"{name}-{i}-{group['name']}"
            group_replicas = max(1 if group.get("replicas") is None else group["replicas"], 0)
            add(group_name, group.get("resourceSharing"), f"spec.template.podCliqueScalingGroups[{g}].resourceSharing", group_replicas)
            for j in range(group_replicas):
                for clique_name in group.get("cliqueNames") or []:
                    c = next((k for k, t in enumerate(cliques) if t["name"] == clique_name), None)
                    if c is not None:
                        member = cliques[c]
                        add(f"{group_name}-{j}-{clique_name}", member.get("resourceSharing"),
                            f"spec.template.cliques[{c}].resourceSharing", clique_replicas(member))
    return found


def stale_claims(owned: Owner, existing: Iterable[tuple[str, Mapping[str, str]]]) -> list[str]:
    """Names of this owner's PerReplica claims for replicas >= N, as Grove's cleanup selector picks
    them (BEHAVIOUR.md §4.8): every claim that carries all of the owner's labels and a replica-index
    label that is not one of 0..N-1. An owner with no entries cleans up nothing."""
    if not owned.entries:
        return []
    selector = owned.owner_labels().items()
    replica_label = owned.level.replica_label
    return [
        name
        for name, claim_labels in existing
        if replica_label in claim_labels
        and not index_below(claim_labels[replica_label], owned.replicas)
        and all(claim_labels.get(k) == v for k, v in selector)
    ]
