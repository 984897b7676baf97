"""The claim reconciler's limit per owner, warned about at admission (DECISIONS.md §3): counted from
the replicas the spec gives, one warning per list of entries, never a denial (not even under
``strict``: replica counts are scale, and the reconciler makes the first claims)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from core.podcliquesets import Object, create, pcs_review, small, update
from webhook.core.admission import answer
from webhook.core.pcs.validator import PodCliqueSetValidator

UID = "5ca1ab1e-0000-4000-8000-000000000000"


def over(source: str, kind: str, name: str, count: int, limit: int = 10_000) -> str:
    return (
        f"{source}: {kind} {name} needs {count} ResourceClaims, more than the limit of {limit} "
        f"(--max-claims-per-owner): only the first {limit} are created"
    )


def scaled(pcs_replicas: int = 1, clique_replicas: int = 1, group_replicas: int | None = None) -> Object:
    """``small`` with ``gpu`` shared PerReplica at every level: one claim per replica of the
    PodCliqueSet, of the scaling group and of clique ``a``."""
    pcs = small()
    template = pcs["spec"]["template"]
    pcs["spec"]["replicas"] = pcs_replicas
    template["resourceSharing"][0]["scope"] = "PerReplica"
    template["cliques"][0]["spec"]["replicas"] = clique_replicas
    group = template["podCliqueScalingGroups"][0]
    group["resourceSharing"][0]["scope"] = "PerReplica"
    if group_replicas is not None:
        group["replicas"] = group_replicas
    return pcs


def test_an_owner_over_the_limit_is_admitted_with_a_warning_naming_its_entries() -> None:
    response = create(scaled(clique_replicas=10_001))
    assert response == {
        "uid": UID, "allowed": True, "status": {"code": 200},
        "warnings": [over("spec.template.cliques[0].resourceSharing", "PodClique", "p-0-a", 10_001)],
    }


def test_at_the_limit_nothing_is_said() -> None:
    assert "warnings" not in create(scaled(pcs_replicas=10_000, clique_replicas=10_000, group_replicas=10_000))


def test_each_level_is_counted_with_its_own_replicas_once_whatever_the_replicas_above_it() -> None:
    """Only the first replica's owners are named: every other is made from the same entries."""
    response = create(scaled(pcs_replicas=10_001, clique_replicas=20_000, group_replicas=30_000))
    assert response["allowed"] is True
    assert response["warnings"] == [
        over("spec.template.resourceSharing", "PodCliqueSet", "p", 10_001),
        over("spec.template.cliques[0].resourceSharing", "PodClique", "p-0-a", 20_000),
        over("spec.template.podCliqueScalingGroups[0].resourceSharing", "PodCliqueScalingGroup", "p-0-g", 30_000),
    ]


def test_all_replicas_entries_count_too() -> None:
    pcs = scaled(pcs_replicas=10_000)
    pcs["spec"]["template"]["resourceClaimTemplates"].append({**pcs["spec"]["template"]["resourceClaimTemplates"][0], "name": "nic"})
    pcs["spec"]["template"]["resourceSharing"].append({"name": "nic", "scope": "AllReplicas"})
    assert create(pcs)["warnings"] == [over("spec.template.resourceSharing", "PodCliqueSet", "p", 10_001)]


def test_strict_still_admits() -> None:
    response = create(scaled(clique_replicas=10_001), strict=True)
    assert response["allowed"] is True
    assert response["warnings"] == [over("spec.template.cliques[0].resourceSharing", "PodClique", "p-0-a", 10_001)]


def test_an_update_that_scales_past_the_limit_is_warned_about() -> None:
    old = scaled()
    new = scaled(pcs_replicas=20_000)
    response = update(new, old)
    assert response["allowed"] is True
    assert response["warnings"] == [over("spec.template.resourceSharing", "PodCliqueSet", "p", 20_000)]


def test_the_limit_is_the_validators() -> None:
    validator = PodCliqueSetValidator(max_claims_per_owner=1)
    decision = asyncio.run(answer(validator, "validate-podcliqueset", orjson.dumps(pcs_review(scaled(pcs_replicas=2)))))
    response: dict[str, Any] = decision.body["response"]
    assert response["warnings"] == [
        over("spec.template.resourceSharing", "PodCliqueSet", "p", 2, limit=1),
    ]


def test_a_content_seen_before_at_other_replicas_is_counted_again() -> None:
    """The validator remembers what it read by content; replicas are part of it."""
    validator = PodCliqueSetValidator()
    warned = []
    for replicas in (1, 20_000, 1, 20_000):
        decision = asyncio.run(answer(validator, "validate-podcliqueset", orjson.dumps(pcs_review(scaled(clique_replicas=replicas)))))
        warned.append(decision.body["response"].get("warnings", []))
    assert [len(w) for w in warned] == [0, 1, 0, 1]
