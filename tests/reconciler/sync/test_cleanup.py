"""Stale PerReplica claims (BEHAVIOUR.md §4.8, DECISIONS.md §5): deleted one by one, by name
and UID, only in the PodCliqueSet's namespace, never when another object controls them, and never
twice."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi import FakeApiServer, wait_until
from kubernetes.client.exceptions import ApiException

from reconciler.conftest import Start
from reconciler.objects import claim, events, grove_labels, podcliqueset
from webhook.kube.api import RESOURCECLAIMS, Objects

SHARING = [{"name": "gpu", "scope": "AllReplicas"}, {"name": "gpu", "scope": "PerReplica"}]
INDEX = "grove.io/podcliqueset-replica-index"


def names(fake_api: FakeApiServer, namespace: str = "default") -> list[str]:
    return sorted(c["metadata"]["name"] for c in fake_api.list("resourceclaims", namespace))


def deleted_events(api: Any) -> list[tuple[str, str, str, int]]:
    return events(api, "ResourceClaimDeleted")


def test_zero_replicas_delete_every_per_replica_claim_and_nothing_in_another_namespace(
    fake_api: FakeApiServer, kube_api_client: Any, start_reconciler: Start
) -> None:
    """§9 item 22: the AllReplicas claim stays; a claim labelled alike in another namespace is not
    this PodCliqueSet's."""
    elsewhere = fake_api.create(claim("solo-1-gpu", grove_labels("solo", **{INDEX: "1"}), namespace="team-b"))
    start_reconciler().wait_active()
    fake_api.create(podcliqueset("solo", SHARING, replicas=2))
    wait_until(lambda: names(fake_api) == ["solo-0-gpu", "solo-1-gpu", "solo-all-gpu"], message="claims created")

    fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": 0}})

    stale = [("PodCliqueSet/solo", "Normal", "Deleted stale 2 ResourceClaims: solo-0-gpu, solo-1-gpu", 1)]
    wait_until(lambda: deleted_events(kube_api_client) == stale, message="both PerReplica claims deleted")
    assert names(fake_api) == ["solo-all-gpu"]
    assert fake_api.get("resourceclaims", "team-b", "solo-1-gpu") == elsewhere


def test_claims_created_a_moment_ago_are_cleaned_up_before_their_watch_events_arrive(
    fake_api: FakeApiServer, kube_api_client: Any, start_reconciler: Start
) -> None:
    """A scale-in right after a scale-out: the claims just created are this PodCliqueSet's
    already, though the claims' watch has not reported them yet; all are deleted in one go."""
    start_reconciler().wait_active()
    fake_api.delay_watch("resourceclaims", 1.0)
    fake_api.create(podcliqueset("solo", SHARING, replicas=2))
    wait_until(lambda: names(fake_api) == ["solo-0-gpu", "solo-1-gpu", "solo-all-gpu"], message="claims created")

    fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": 0}})

    stale = [("PodCliqueSet/solo", "Normal", "Deleted stale 2 ResourceClaims: solo-0-gpu, solo-1-gpu", 1)]
    wait_until(lambda: deleted_events(kube_api_client) == stale, message="both PerReplica claims deleted at once")
    assert names(fake_api) == ["solo-all-gpu"]


def test_a_stale_claim_controlled_by_another_object_is_left_alone(
    fake_api: FakeApiServer, kube_api_client: Any, start_reconciler: Start
) -> None:
    """Not fought over (DECISIONS.md §5): only a claim the owner could adopt is one it may delete."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "other", "uid": "d-1", "controller": True}
    earlier = {
        "apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet", "name": "solo", "uid": "an-earlier-solo", "controller": True
    }
    fake_api.create(claim("solo-3-gpu", grove_labels("solo", **{INDEX: "3"})))
    other = fake_api.create(claim("solo-4-gpu", grove_labels("solo", **{INDEX: "4"}), [deployment]))
    fake_api.create(claim("solo-5-gpu", grove_labels("solo", **{INDEX: "5"}), [earlier]))
    start_reconciler().wait_active()

    fake_api.create(podcliqueset("solo", SHARING))

    stale = [("PodCliqueSet/solo", "Normal", "Deleted stale 2 ResourceClaims: solo-3-gpu, solo-5-gpu", 1)]
    wait_until(lambda: deleted_events(kube_api_client) == stale, message="unowned and earlier-owned claims deleted")
    assert names(fake_api) == ["solo-0-gpu", "solo-4-gpu", "solo-all-gpu"]
    assert fake_api.get("resourceclaims", "default", "solo-4-gpu") == other
    assert fake_api.requests.count("DELETE", "/resourceclaims/solo-4-gpu") == 0


def test_a_stale_claim_being_deleted_is_not_deleted_again(
    fake_api: FakeApiServer, kube_api_client: Any, start_reconciler: Start
) -> None:
    """An allocated claim stays, with a deletionTimestamp, until its pods let go of it; a reconciler
    started meanwhile (a restart, a new leader) finds it in its fresh cache and leaves it be."""
    first = start_reconciler()
    first.wait_active()
    fake_api.create(podcliqueset("solo", SHARING, replicas=2))
    wait_until(lambda: "solo-1-gpu" in names(fake_api), message="claims created")
    protection = {"metadata": {"finalizers": ["resource.kubernetes.io/delete-protection"]}}
    fake_api.patch("resourceclaims", "default", "solo-1-gpu", protection)

    fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": 1}})
    stale = [("PodCliqueSet/solo", "Normal", "Deleted stale ResourceClaim solo-1-gpu", 1)]
    wait_until(lambda: deleted_events(kube_api_client) == stale, message="stale claim deleted")
    assert fake_api.get("resourceclaims", "default", "solo-1-gpu")["metadata"]["deletionTimestamp"]
    assert first.stop() == 0

    second = start_reconciler("reconciler-b")
    registry = second.controller.metrics.registry
    wait_until(
        lambda: registry.get_sample_value("grove_sharing_reconciler_reconciles_total", {"result": "success"}),
        message="the new reconciler reconciled solo",
    )
    assert fake_api.requests.count("DELETE", "/resourceclaims/solo-1-gpu") == 1
    assert deleted_events(kube_api_client) == stale
    assert registry.get_sample_value("grove_sharing_reconciler_claim_writes_total", {"action": "deleted"}) == 0


@pytest.mark.parametrize(("uid", "deleted"), [("theirs", False), (None, True)], ids=["another-uid", "its-uid"])
def test_a_delete_names_the_claim_and_its_uid(
    fake_api: FakeApiServer, kube_api_client: Any, uid: str | None, deleted: bool
) -> None:
    """A claim re-created under the same name since it was cached is not the one deleted."""
    stored = fake_api.create(claim("solo-1-gpu", grove_labels("solo", **{INDEX: "1"})))
    claims = Objects(kube_api_client, RESOURCECLAIMS, "default")
    if deleted:
        claims.delete("solo-1-gpu", stored["metadata"]["uid"])
        assert fake_api.get("resourceclaims", "default", "solo-1-gpu") is None
        with pytest.raises(ApiException) as gone:
            claims.delete("solo-1-gpu", stored["metadata"]["uid"])
        assert gone.value.status == 404
    else:
        with pytest.raises(ApiException) as err:
            claims.delete("solo-1-gpu", uid)
        assert err.value.status == 409
        assert fake_api.get("resourceclaims", "default", "solo-1-gpu") is not None
