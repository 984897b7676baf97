"""Bounded at any replica count (DECISIONS.md §5): an owner needing more claims than
--max-claims-per-owner gets the first ones in Grove's order, a Warning Event and a gauge, and
nothing else is held up; negative replicas are refused without deleting anything; a child whose
PodCliqueSet does not exist is logged once."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from fakeapi import FakeApiServer, wait_until

from reconciler.conftest import Start
from reconciler.grove import GroveOperator
from reconciler.objects import (
    GPU_SPEC,
    claim,
    controller,
    events,
    grove_labels,
    podcliqueset,
)

LIMIT = 50
MILLION = 1_000_000
SHARING = [{"name": "gpu", "scope": "AllReplicas"}, {"name": "gpu", "scope": "PerReplica"}]
CLIQUE = "huge-0-worker"


def huge() -> dict[str, Any]:
    """A PodCliqueSet whose one clique has a million pods, each with a claim of its own."""
    pcs = podcliqueset("huge", [])
    pcs["spec"]["template"]["cliques"] = [
        {"name": "worker", "resourceSharing": SHARING, "spec": {"replicas": MILLION, "roleName": "worker"}}
    ]
    return pcs


def names(fake_api: FakeApiServer, part_of: str) -> set[str]:
    found = fake_api.list("resourceclaims", "default", label_selector=f"app.kubernetes.io/part-of={part_of}")
    return {c["metadata"]["name"] for c in found}


def reconciles(running: Any) -> float:
    registry = running.controller.metrics.registry
    return registry.get_sample_value("grove_sharing_reconciler_reconciles_total", {"result": "success"}) or 0.0


def gauge(running: Any) -> float | None:
    return running.controller.metrics.registry.get_sample_value("grove_sharing_reconciler_owners_over_claim_limit")


def test_an_owner_over_the_limit_gets_the_first_claims_and_a_warning_and_holds_nothing_up(
    fake_api: FakeApiServer, kube_api_client: Any, start_reconciler: Start
) -> None:
    running = start_reconciler(max_claims_per_owner=LIMIT)
    running.wait_active()
    grove = GroveOperator(fake_api, huge())
    grove.sync()
    fake_api.create(podcliqueset("small", SHARING, replicas=2))

    first = {f"{CLIQUE}-all-gpu"} | {f"{CLIQUE}-{k}-gpu" for k in range(LIMIT - 1)}
    wait_until(lambda: names(fake_api, "huge") == first, message="the first 50 claims in Grove's order")
    wait_until(lambda: names(fake_api, "small") == {"small-all-gpu", "small-0-gpu", "small-1-gpu"}, message="small")
    over = (
        f"PodClique/{CLIQUE}",
        "Warning",
        f"PodClique {CLIQUE} needs 1000001 ResourceClaims, more than the limit of 50 (--max-claims-per-owner): "
        "only the first 50 are created",
    )
    wait_until(lambda: [e[:3] for e in events(kube_api_client, "ResourceClaimLimitExceeded")] == [over], message="warning")
    assert gauge(running) == 1

    # A claim beyond the limit that the clique still has a pod for (Grove's operator made it) is
    # kept; scaled in to 10 pods, the claims of pods 10 and above go, and the owner is in bounds.
    clique = fake_api.get("podcliques", "default", CLIQUE)
    before = reconciles(running)
    fake_api.create(claim(f"{CLIQUE}-500-gpu", grove_labels(
        "huge", **{"grove.io/podclique": CLIQUE, "grove.io/podclique-pod-index": "500"}), [controller(clique)]))
    wait_until(lambda: reconciles(running) > before and running.controller.queue.idle, message="reconciled")
    assert f"{CLIQUE}-500-gpu" in names(fake_api, "huge")

    grove.scale("podcliques", CLIQUE, 10)
    wanted = {f"{CLIQUE}-all-gpu"} | {f"{CLIQUE}-{k}-gpu" for k in range(10)}
    wait_until(lambda: names(fake_api, "huge") == wanted, message="scaled in to 10")
    wait_until(lambda: gauge(running) == 0, message="no owner over the limit")
    assert fake_api.get("resourceclaims", "default", f"{CLIQUE}-0-gpu")["spec"] == GPU_SPEC


def test_negative_replicas_are_reported_and_nothing_is_deleted(
    fake_api: FakeApiServer, kube_api_client: Any, start_reconciler: Start
) -> None:
    running = start_reconciler()
    running.wait_active()
    fake_api.create(podcliqueset("solo", SHARING, replicas=2))
    wait_until(lambda: names(fake_api, "solo") == {"solo-all-gpu", "solo-0-gpu", "solo-1-gpu"}, message="claims")

    fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": -1}})

    invalid = [(
        "PodCliqueSet/solo",
        "Warning",
        "spec.replicas is -1: no ResourceClaims are created or deleted for this PodCliqueSet until it is 0 or more",
    )]
    wait_until(lambda: [e[:3] for e in events(kube_api_client, "ResourceClaimInvalidReplicas")] == invalid, message="ev")
    wait_until(lambda: running.controller.queue.idle, message="reconciled")
    assert names(fake_api, "solo") == {"solo-all-gpu", "solo-0-gpu", "solo-1-gpu"}
    assert fake_api.requests.count("DELETE", "/resourceclaims/") == 0

    fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": 1}})
    wait_until(lambda: names(fake_api, "solo") == {"solo-all-gpu", "solo-0-gpu"}, message="valid again: cleaned up")


def orphan(name: str, owners: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "labels": {"app.kubernetes.io/managed-by": "grove-operator", "app.kubernetes.io/part-of": "nobody",
                   "grove.io/podcliqueset-replica-index": "0"},
    }
    if owners:
        metadata["ownerReferences"] = owners
    return {"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueScalingGroup", "metadata": metadata,
            "spec": {"replicas": 1}}


def test_a_child_of_no_podcliqueset_is_logged_once(
    fake_api: FakeApiServer, start_reconciler: Start, caplog: pytest.LogCaptureFixture
) -> None:
    running = start_reconciler()
    running.wait_active()
    caplog.set_level(logging.DEBUG, logger="webhook.reconciler")
    gone = {"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet", "name": "nobody", "uid": "gone",
            "controller": True}
    fake_api.create(orphan("nobody-0-sga"))
    fake_api.create(orphan("nobody-0-sgb", [gone]))
    for replicas in (2, 3):
        fake_api.patch("podcliquescalinggroups", "default", "nobody-0-sga", {"spec": {"replicas": replicas}})

    def lines() -> list[tuple[str, str]]:
        return [(r.levelname, r.getMessage()) for r in caplog.records if "names PodCliqueSet" in r.getMessage()]

    wait_until(lambda: len(lines()) == 2 and running.controller.queue.idle, message="both logged")
    assert sorted(lines()) == [
        ("DEBUG", "PodCliqueScalingGroup default/nobody-0-sgb names PodCliqueSet nobody, which does not exist; "
                  "ignored until the garbage collector removes it"),
        ("INFO", "PodCliqueScalingGroup default/nobody-0-sga names PodCliqueSet nobody, which does not exist; ignored"),
    ]
