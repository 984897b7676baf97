"""``status``'s comparison without a cluster: Grove's end-to-end workload (as ``claims`` reads it)
against objects made here, broken one way per test."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.grove import WORKLOAD
from webhook.claims.listing import Workload, listing, read
from webhook.status.compare import Cluster, EventText, Problem, Report, report

Obj = dict[str, Any]
LIMIT = 10_000
NS = "default"


UID = "uid-of-rs-test"


@pytest.fixture
def workload(tmp_path: Path) -> Workload:
    """The end-to-end workload as stored: its PodCliqueSet has a UID, which its claims' owner
    references and Events name."""
    documents = [d for d in yaml.safe_load_all(WORKLOAD.read_text()) if d]
    for document in documents:
        if document["kind"] == "PodCliqueSet":
            document["metadata"]["uid"] = UID
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    return read([path])[0]


def made(workload: Workload) -> Cluster:
    """The cluster once the reconciler has made every claim and the external templates exist."""
    cluster = Cluster(templates={(NS, "ext-tpl"), ("rs-shared", "ext-ns-tpl")})
    for claim in listing(workload, LIMIT).claims:
        metadata = {"name": claim.name, "namespace": NS, "labels": dict(claim.labels), "ownerReferences": [claim.owner.to_api()]}
        cluster.claims[(NS, claim.name)] = {"metadata": metadata, "spec": {}}
    return cluster


def compared(workload: Workload, cluster: Cluster, limit: int = LIMIT) -> Report:
    return report(listing(workload, limit), cluster, limit)


def problems(result: Report) -> list[tuple[str, str]]:
    return [(str(f.problem), f.subject) for f in result.findings]


def test_every_claim_made_is_well(workload: Workload) -> None:
    result = compared(workload, made(workload))
    assert result.healthy and (result.claims, result.present, result.pods) == (12, 12, 0)


def test_a_missing_claim_of_a_deleted_template_says_so_with_the_owners_last_warning(workload: Workload) -> None:
    cluster = made(workload)
    cluster.templates.discard((NS, "ext-tpl"))
    del cluster.claims[(NS, "rs-test-0-ext-tpl")]
    event = EventText("Warning", "ResourceClaimTemplateNotFound", "not found", 3, "2026-11-26T01:00:00Z")
    cluster.warnings[UID] = event
    result = compared(workload, cluster)
    assert problems(result) == [("ClaimMissing", "ResourceClaim default/rs-test-0-ext-tpl")]
    assert "its ResourceClaimTemplate default/ext-tpl does not exist" in result.findings[0].message
    assert result.findings[0].event == event and result.present == 11
    assert str(event) == "Warning ResourceClaimTemplateNotFound (x3) at 2026-11-26T01:00:00Z: not found"


def test_a_claim_controlled_by_another_object_is_missing_and_one_without_grove_labels_differs(workload: Workload) -> None:
    cluster = made(workload)
    taken = cluster.claims[(NS, "rs-test-0-ext-tpl")]["metadata"]
    taken["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "impostor", "uid": "u", "controller": True}]
    bare = cluster.claims[(NS, "rs-test-0-int-tpl")]["metadata"]
    bare["labels"] = {}
    result = compared(workload, cluster)
    assert problems(result) == [
        ("ClaimMissing", "ResourceClaim default/rs-test-0-ext-tpl"), ("ClaimNotGroves", "ResourceClaim default/rs-test-0-int-tpl"),
    ]
    assert "controlled by ConfigMap impostor, not PodCliqueSet rs-test" in result.findings[0].message
    assert "labels app.kubernetes.io/component=resource-claim" in result.findings[1].message


def test_a_claim_no_replica_needs_is_stale_but_not_the_claims_past_the_limit(workload: Workload) -> None:
    cluster = made(workload)
    stale = copy.deepcopy(cluster.claims[(NS, "rs-test-0-sga-1-int-tpl3")])
    stale["metadata"]["name"] = "rs-test-0-sga-5-int-tpl3"
    cluster.claims[(NS, "rs-test-0-sga-5-int-tpl3")] = stale
    assert problems(compared(workload, cluster)) == [("ClaimStale", "ResourceClaim default/rs-test-0-sga-5-int-tpl3")]
    over = compared(workload, made(workload), limit=1)
    assert {p for p, _ in problems(over)} == {"OwnerOverLimit"}
    assert all("more than the limit of 1" in f.message for f in over.findings)


def pod(name: str, clique: str, index: int, claims: list[str], **spec: Any) -> Obj:
    pod_labels = {"app.kubernetes.io/part-of": "rs-test", "grove.io/podclique": clique, "grove.io/podclique-pod-index": str(index),
                  "grove.io/podcliqueset-replica-index": "0"}
    entries = [{"name": c, "resourceClaimName": c} for c in claims]
    return {"metadata": {"name": name, "namespace": NS, "labels": pod_labels},
            "spec": {"resourceClaims": entries, **spec}, "status": {"phase": "Pending"}}


def test_pods_lacking_claims_waiting_for_missing_ones_or_on_unallocated_ones(workload: Workload) -> None:
    cluster = made(workload)
    expected = next(p.claims for p in listing(workload, LIMIT).pods if p.clique == "rs-test-0-worker-a")
    cluster.pods[(NS, "rs-test")] = [
        pod("bare", "rs-test-0-worker-a", 0, []),
        pod("gated", "rs-test-0-worker-a", 0, expected, schedulingGates=[{"name": "grove.io/gang"}]),
        pod("placed", "rs-test-0-worker-a", 0, expected, nodeName="node-1"),
        pod("waiting", "rs-test-0-worker-a", 0, [*expected, "nowhere"]),
    ]
    result = compared(workload, cluster)
    found = problems(result)
    assert found[0] == ("PodMissingClaims", "Pod default/bare")
    assert ("PodWaitsForMissingClaim", "Pod default/waiting") in found
    unallocated = [f for f in result.findings if f.problem is Problem.CLAIM_UNALLOCATED]
    assert len(unallocated) == len(expected) and all("(waiting)" in f.message for f in unallocated)
    assert not any("gated" in f.subject or "placed" in f.subject for f in result.findings)


def managed_by(manager: str) -> list[Obj]:
    """Managed fields of a claim created by ``manager`` with Grove's labels and owner."""
    fields = {"f:metadata": {"f:labels": {"f:app.kubernetes.io/managed-by": {}}, "f:ownerReferences": {}}, "f:spec": {}}
    return [{"manager": manager, "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": fields}]


@pytest.mark.parametrize(("managers", "made_by", "missing"), [
    (("grove-sharing-webhook",), "reconciler", "not created yet: the reconciler has not made it"),
    (("grove-operator",), "grove-operator", "not created yet: Grove's operator has not made it"),
    (("grove-sharing-webhook", "grove-operator"), "grove-operator", "not created yet: Grove's operator has not made it"),
    ((), None, "not created yet: the reconciler has not made it"),
], ids=["made by the reconciler", "made by Grove's operator", "both, once", "made by no one it can tell"])
def test_who_made_the_claims_is_said_and_named_in_a_missing_claims_reason(
    workload: Workload, managers: tuple[str, ...], made_by: str | None, missing: str
) -> None:
    cluster = made(workload)
    del cluster.claims[(NS, "rs-test-0-int-tpl")]
    for manager, claim in zip(managers, sorted(cluster.claims.values(), key=lambda c: c["metadata"]["name"]), strict=False):
        claim["metadata"]["managedFields"] = managed_by(manager)
    result = compared(workload, cluster)
    assert (result.made_by, problems(result)) == (made_by, [("ClaimMissing", "ResourceClaim default/rs-test-0-int-tpl")])
    assert result.findings[0].message.startswith(f"missing: {missing} ")
