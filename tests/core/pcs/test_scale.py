"""Claim names a scale makes (DECISIONS.md §3.3): at CREATE and UPDATE the names are checked at the
autoscalers' maxReplicas, and a scale of a PodClique, scaling group or PodCliqueSet (its ``scale``
subresource) is warned about, or denied under ``strict``, when the new count makes a name pods
cannot use."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from core.answers import Source
from core.podcliquesets import Object, small
from webhook.core.admission import answer
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.pcs.scale import ScaleValidator, place
from webhook.core.pcs.warnings import claim_warnings
from webhook.core.sharing.owners import Level

REJECTED = "pods that reference it will be rejected"
TOO_LONG = "must be no more than 63 characters"
# 9 characters of PodCliqueSet name, so that "<pcs>-0-a-<index>-<template>" is 63 characters at
# index 9 and 64 at index 10, the eleventh replica (Grove's #660).
PCS = "p" * 9
TEMPLATE = "t" * 47


def spec(clique_max: int | None = None, group_max: int | None = None) -> Object:
    """``small`` renamed: clique ``a`` shares ``TEMPLATE`` PerReplica (a name of 63 characters at
    replica 9), and scaling group ``g`` shares it PerReplica too."""
    pcs = small()
    pcs["metadata"]["name"] = PCS
    template = pcs["spec"]["template"]
    template["resourceClaimTemplates"][0]["name"] = TEMPLATE
    template["resourceSharing"] = []
    clique = template["cliques"][0]
    clique["resourceSharing"] = [{"name": TEMPLATE, "scope": "PerReplica"}]
    clique["spec"]["replicas"] = 2
    group = template["podCliqueScalingGroups"][0]
    group["resourceSharing"] = [{"name": TEMPLATE, "scope": "PerReplica"}]
    if clique_max is not None:
        clique["spec"]["autoScalingConfig"] = {"minReplicas": 1, "maxReplicas": clique_max}
    if group_max is not None:
        group["scaleConfig"] = {"minReplicas": 1, "maxReplicas": group_max}
    return pcs


def projected(pcs: Object) -> PodCliqueSet:
    return read_podcliqueset(pcs)


@pytest.mark.parametrize(
    ("clique_max", "group_max", "expected"),
    [
        pytest.param(None, None, [], id="no autoscaling: names valid at replicas"),
        pytest.param(11, None, [("spec.template.cliques[0].resourceSharing[0]", f"{PCS}-0-a-10-{TEMPLATE}")], id="clique max 11"),
        pytest.param(None, 11, [("spec.template.podCliqueScalingGroups[0].resourceSharing[0]", f"{PCS}-0-g-10-{TEMPLATE}")], id="group max 11"),
        pytest.param(10, 10, [], id="max 10: index 9 at most, still valid"),
        pytest.param(1, None, [], id="a maximum below replicas changes nothing"),
    ],
)
def test_create_checks_names_at_the_autoscalers_maximum(clique_max: int | None, group_max: int | None, expected: list[tuple[str, str]]) -> None:
    warnings = claim_warnings(projected(spec(clique_max, group_max)))
    assert warnings == [f'{source}: claim name "{name}" is not a valid DNS-1123 label ({TOO_LONG}); {REJECTED}' for source, name in expected]


def scale_review(resource: str, name: str, new: int, old: int | None = 1, namespace: str = "default") -> dict[str, Any]:
    def scale(replicas: int) -> Object:
        return {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": name, "namespace": namespace}, "spec": {"replicas": replicas}}

    request: Object = {
        "uid": "u1",
        "kind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
        "resource": {"group": "grove.io", "version": "v1alpha1", "resource": resource},
        "subResource": "scale",
        "name": name,
        "namespace": namespace,
        "operation": "UPDATE",
        "object": scale(new),
    }
    if old is not None:
        request["oldObject"] = scale(old)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def scaled(review: dict[str, Any], pcs: Object | None = None, strict: bool = False) -> dict[str, Any]:
    source = Source([] if pcs is None else [projected(pcs)])
    decided = asyncio.run(answer(ScaleValidator(source, strict), "validate-scale", orjson.dumps(review)))
    result: dict[str, Any] = decided.body["response"]
    return result


CLIQUE_TOO_LONG = (
    f"PodClique {PCS}-0-a at 11 replicas: claim name \"{PCS}-0-a-10-{TEMPLATE}\" (spec.template.cliques[0].resourceSharing[0]) "
    f"is not a valid DNS-1123 label ({TOO_LONG}); {REJECTED}"
)


def test_scaling_a_podclique_to_index_10_warns_naming_the_first_invalid_claim() -> None:
    found = scaled(scale_review("podcliques", f"{PCS}-0-a", 11, old=2), spec())
    assert found["allowed"] is True
    assert found["warnings"] == [CLIQUE_TOO_LONG]


def test_strict_denies_the_scale_with_the_same_text() -> None:
    found = scaled(scale_review("podcliques", f"{PCS}-0-a", 11, old=2), spec(), strict=True)
    assert (found["allowed"], found["status"]["code"], found["status"]["message"]) == (False, 403, CLIQUE_TOO_LONG)


@pytest.mark.parametrize(
    ("review", "pcs"),
    [
        pytest.param(scale_review("podcliques", f"{PCS}-0-a", 11, old=2), None, id="PodCliqueSet unknown"),
        pytest.param(scale_review("podcliques", f"{PCS}-0-a", 10, old=2), spec(), id="names still valid up to index 9"),
        pytest.param(scale_review("podcliques", f"{PCS}-0-a", 2, old=12), spec(), id="scale down"),
        pytest.param(scale_review("podcliques", f"{PCS}-0-x", 12), spec(), id="no such clique"),
        pytest.param(scale_review("podcliques", f"{PCS}-1-a", 12), spec(), id="PodCliqueSet replica beyond its replicas"),
        pytest.param(scale_review("deployments", f"{PCS}-0-a", 12), spec(), id="another resource"),
    ],
)
def test_allowed_without_a_word(review: dict[str, Any], pcs: Object | None) -> None:
    found = scaled(review, pcs, strict=True)
    assert found["allowed"] is True and "warnings" not in found


def test_scaling_a_group_checks_its_claims_and_its_members() -> None:
    pcs = spec()
    pcs["spec"]["template"]["cliques"][1]["resourceSharing"] = [{"name": "x" * 45, "scope": "AllReplicas"}]
    found = scaled(scale_review("podcliquescalinggroups", f"{PCS}-0-g", 11), pcs)
    assert found["warnings"] == [
        f'PodCliqueScalingGroup {PCS}-0-g at 11 replicas: claim name "{PCS}-0-g-10-{TEMPLATE}" '
        f"(spec.template.podCliqueScalingGroups[0].resourceSharing[0]) is not a valid DNS-1123 label ({TOO_LONG}); {REJECTED}",
        f'PodCliqueScalingGroup {PCS}-0-g at 11 replicas: claim name "{PCS}-0-g-0-b-all-{"x" * 45}" '
        f"(spec.template.cliques[1].resourceSharing[0]) is not a valid DNS-1123 label ({TOO_LONG}); {REJECTED}",
    ]


def test_a_scale_that_makes_two_entries_share_a_name_warns() -> None:
    """PodCliqueSet-level PerReplica ``a-1-t`` names ``<pcs>-0-a-1-t``, which clique ``a`` also makes
    once it has a second replica."""
    pcs = spec()
    pcs["spec"]["template"]["cliques"][0]["resourceSharing"] = [{"name": "t", "scope": "PerReplica"}]
    pcs["spec"]["template"]["cliques"][0]["spec"]["replicas"] = 1
    pcs["spec"]["template"]["resourceSharing"] = [{"name": "a-1-t", "scope": "PerReplica"}]
    found = scaled(scale_review("podcliques", f"{PCS}-0-a", 2), pcs)
    assert found["warnings"] == [
        f'PodClique {PCS}-0-a at 2 replicas: claim name "{PCS}-0-a-1-t" (spec.template.cliques[0].resourceSharing[0]) '
        "is also generated by spec.template.resourceSharing[0]; the second owner cannot own it and a pod referencing it twice is rejected"
    ]


def test_scaling_the_podcliqueset_checks_every_name() -> None:
    pcs = spec()
    pcs["spec"]["template"]["resourceSharing"] = [{"name": "u" * 51, "scope": "PerReplica"}]
    pcs["spec"]["template"]["cliques"][0]["resourceSharing"][0]["name"] = "short"
    pcs["spec"]["template"]["podCliqueScalingGroups"][0]["resourceSharing"][0]["name"] = "short"
    found = scaled(scale_review("podcliquesets", PCS, 11), pcs)
    assert found["warnings"] == [
        f'PodCliqueSet {PCS} at 11 replicas: claim name "{PCS}-10-{"u" * 51}" (spec.template.resourceSharing[0]) '
        f"is not a valid DNS-1123 label ({TOO_LONG}); {REJECTED}"
    ]


@pytest.mark.parametrize(
    ("level", "name", "found"),
    [
        pytest.param(Level.CLIQUE, "a-b-0-c", ("a-b", 0), id="standalone, PodCliqueSet name with a hyphen"),
        pytest.param(Level.CLIQUE, "a-b-0-g-3-m", ("a-b", 1), id="member of a scaling group"),
        pytest.param(Level.SCALING_GROUP, "a-b-0-g", ("a-b", 0), id="scaling group"),
        pytest.param(Level.CLIQUE, "a-b-0-m", None, id="a member has no standalone PodClique"),
        pytest.param(Level.CLIQUE, "a-b-00-c", None, id="an index has no leading zero"),
    ],
)
def test_objects_are_placed_by_grove_names(level: Level, name: str, found: tuple[str, int] | None) -> None:
    pcs = {
        "metadata": {"name": "a-b", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "template": {"cliques": [{"name": "c"}, {"name": "m"}], "podCliqueScalingGroups": [{"name": "g", "cliqueNames": ["m"]}]},
        },
    }
    stored = projected(pcs)
    target = place(level, name, {"a-b": stored}.get)
    assert (None if target is None else (target.pcs.name, target.config)) == found
