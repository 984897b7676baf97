"""Existing claims: adopted when nobody controls them, left alone when someone else does, and not
written at all when they are as desired."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi import FakeApiServer, wait_until

from reconciler.conftest import Start
from reconciler.objects import (
    GPU_SPEC,
    OTHER_SPEC,
    claim,
    controller,
    events,
    grove_labels,
    podcliqueset,
)

SHARING = [{"name": "gpu", "scope": "AllReplicas"}]


def ours(fake_api: FakeApiServer, name: str) -> bool:
    found = fake_api.get("resourceclaims", "default", name)
    pcs = fake_api.get("podcliquesets", "default", "solo")
    return bool(found and pcs and found["metadata"].get("ownerReferences") == [controller(pcs)])


@pytest.mark.parametrize(
    ("labels", "owners", "requests"),
    [
        ({"team": "a"}, None, {"POST": 1, "GET": 1, "PATCH": 1}),
        (grove_labels("solo", team="a"), None, {"PATCH": 1}),
        (
            {"team": "a"},
            [{"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet", "name": "solo", "uid": "an-earlier-solo", "controller": True}],
            {"POST": 1, "GET": 1, "PATCH": 1},
        ),
    ],
    ids=["unowned-unlabelled", "unowned-labelled-as-grove-s", "controlled-by-an-earlier-owner-of-that-name"],
)
def test_an_existing_claim_is_adopted_with_its_spec_unchanged(
    fake_api: FakeApiServer,
    kube_api_client: Any,
    start_reconciler: Start,
    labels: dict[str, str],
    owners: list[dict[str, Any]] | None,
    requests: dict[str, int],
) -> None:
    fake_api.create(claim("solo-all-gpu", labels, owners))
    start_reconciler().wait_active()
    fake_api.requests.reset()

    fake_api.create(podcliqueset("solo", SHARING))

    wait_until(lambda: ours(fake_api, "solo-all-gpu"), message="claim adopted")
    adopted = fake_api.get("resourceclaims", "default", "solo-all-gpu")
    assert adopted["spec"] == OTHER_SPEC
    assert adopted["metadata"]["labels"] == grove_labels("solo", team="a")
    claim_requests = [r.method for r in fake_api.requests if "/resourceclaims" in r.path and not r.is_watch]
    assert {m: claim_requests.count(m) for m in set(claim_requests)} == requests
    adopted_event = [("PodCliqueSet/solo", "Normal", "Adopted ResourceClaim solo-all-gpu", 1)]
    wait_until(lambda: events(kube_api_client, "ResourceClaimAdopted") == adopted_event, message="adoption reported")


def test_a_claim_controlled_by_another_object_is_reported_and_left_alone(
    fake_api: FakeApiServer, kube_api_client: Any, start_reconciler: Start
) -> None:
    other = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "other", "uid": "d-1", "controller": True}
    fake_api.create(claim("solo-all-gpu", {"team": "a"}, [other]))
    # A stale PerReplica claim: cleanup must wait until every claim of the owner is as desired.
    fake_api.create(claim("solo-3-gpu2", grove_labels("solo", **{"grove.io/podcliqueset-replica-index": "3"})))
    running = start_reconciler()
    running.wait_active()

    fake_api.create(podcliqueset("solo", [*SHARING, {"name": "gpu2", "scope": "PerReplica"}], templates=("gpu", "gpu2")))

    message = "Object default/solo-all-gpu is already owned by another Deployment controller other"
    wait_until(
        lambda: [e[:3] for e in events(kube_api_client, "ResourceClaimOwnedByOther")]
        == [("PodCliqueSet/solo", "Warning", message)],
        message="owned-by-other reported",
    )
    wait_until(lambda: events(kube_api_client, "ResourceClaimOwnedByOther")[0][3] >= 2, message="retried")
    untouched = fake_api.get("resourceclaims", "default", "solo-all-gpu")
    assert untouched["metadata"]["labels"] == {"team": "a"}
    assert untouched["metadata"]["ownerReferences"] == [other]
    assert untouched["spec"] == OTHER_SPEC
    assert fake_api.get("resourceclaims", "default", "solo-0-gpu2")["spec"] == GPU_SPEC  # the rest goes on
    assert fake_api.get("resourceclaims", "default", "solo-3-gpu2") is not None
    assert fake_api.requests.count("PATCH", "/resourceclaims/solo-all-gpu") == 0

    # The other controller lets go: the next retry adopts the claim and then cleans up.
    fake_api.patch("resourceclaims", "default", "solo-all-gpu", {"metadata": {"ownerReferences": None}})
    wait_until(lambda: ours(fake_api, "solo-all-gpu"), message="claim adopted once released")
    wait_until(lambda: fake_api.get("resourceclaims", "default", "solo-3-gpu2") is None, message="stale claim deleted")
    deleted_event = [("PodCliqueSet/solo", "Normal", "Deleted stale ResourceClaim solo-3-gpu2", 1)]
    wait_until(lambda: events(kube_api_client, "ResourceClaimDeleted") == deleted_event, message="deletion reported")


def test_nothing_is_written_when_everything_is_as_desired(fake_api: FakeApiServer, start_reconciler: Start) -> None:
    running = start_reconciler()
    running.wait_active()
    fake_api.create(podcliqueset("solo", [*SHARING, {"name": "gpu", "scope": "PerReplica"}], replicas=3))
    # Four claims created, and one Event naming them.
    wait_until(lambda: running.writes == 5, message="claims created and reported")
    registry = running.controller.metrics.registry

    def reconciles() -> float:
        return registry.get_sample_value("grove_sharing_reconciler_reconciles_total", {"result": "success"}) or 0

    before, writes = reconciles(), running.writes
    for n in range(3):
        fake_api.patch("podcliquesets", "default", "solo", {"metadata": {"labels": {"touch": str(n)}}})
        wait_until(lambda: reconciles() >= before + n + 1, message="reconciled again")
    assert running.writes == writes
    assert registry.get_sample_value("grove_sharing_reconciler_claim_writes_total", {"action": "created"}) == 4
