"""A second, independent reading of which claims a spec produces: the oracle the name patterns and
the owner walk are checked against. It walks the pydantic schema, not what the webhooks read, and lists every
owner and every replica, so it is only fit for the small random specs of the tests."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from webhook.core.model.schema import PodCliqueSetSchema, ResourceSharingSpec
from webhook.core.sharing.owners import Owner
from webhook.core.sharing.placement import index_below


def _owner(name: str, entries: list[ResourceSharingSpec], source: str, replicas: int) -> Iterator[tuple[str, str]]:
    """(entry field path, claim name) of one owner: AllReplicas entries, then PerReplica ones per replica."""
    for i, entry in enumerate(entries):
        if entry.scope == "AllReplicas" and entry.name:
            yield f"{source}[{i}]", f"{name}-all-{entry.name}"
    for replica in range(replicas):
        for i, entry in enumerate(entries):
            if entry.scope == "PerReplica" and entry.name:
                yield f"{source}[{i}]", f"{name}-{replica}-{entry.name}"


def claim_names(raw: dict[str, Any]) -> dict[str, set[str]]:
    """Entry field path to every claim name the owners Grove builds from the spec give it."""
    pcs = PodCliqueSetSchema.model_validate(raw)
    template, name = pcs.spec.template, pcs.metadata.name
    found: dict[str, set[str]] = {}

    def add(owner: str, entries: list[ResourceSharingSpec], source: str, replicas: int) -> None:
        for path, claim in _owner(owner, entries, source, replicas):
            found.setdefault(path, set()).add(claim)

    add(name, list(template.resource_sharing), "spec.template.resourceSharing", max(pcs.spec.replicas, 0))
    members = {n for g in template.pod_clique_scaling_groups for n in g.clique_names}
    for i in range(max(pcs.spec.replicas, 0)):
        for c, clique in enumerate(template.cliques):
            if clique.name not in members:
                replicas = max(clique.spec.replicas or 0, 1)
                add(f"{name}-{i}-{clique.name}", clique.resource_sharing, f"spec.template.cliques[{c}].resourceSharing", replicas)
        for g, group in enumerate(template.pod_clique_scaling_groups):
            group_name = f"{name}-{i}-{group.name}"
            group_replicas = max(1 if group.replicas is None else group.replicas, 0)
            add(group_name, list(group.resource_sharing), f"spec.template.podCliqueScalingGroups[{g}].resourceSharing", group_replicas)
            for j in range(group_replicas):
                for clique_name in group.clique_names:
                    c = next((k for k, t in enumerate(template.cliques) if t.name == clique_name), None)
                    if c is None:
                        continue
                    member = template.cliques[c]
                    add(f"{group_name}-{j}-{clique_name}", member.resource_sharing,
                        f"spec.template.cliques[{c}].resourceSharing", max(member.spec.replicas or 0, 1))
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
