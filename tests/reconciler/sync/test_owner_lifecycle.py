"""A PodCliqueSet that is being deleted gets nothing written for it; one deleted and created again
under the same name takes over its predecessor's claims (BEHAVIOUR.md §4.7) and cleans up
those its replicas no longer need (§4.8)."""

from __future__ import annotations

from typing import Any

from fakeapi import FakeApiServer, wait_until

from reconciler.conftest import Start
from reconciler.objects import controller, podcliqueset

SHARING = [{"name": "gpu", "scope": "AllReplicas"}, {"name": "gpu", "scope": "PerReplica"}]


def claims(fake_api: FakeApiServer) -> dict[str, list[dict[str, Any]]]:
    """Claim name -> owner references."""
    return {c["metadata"]["name"]: c["metadata"].get("ownerReferences", []) for c in fake_api.list("resourceclaims", "default")}


def test_a_podcliqueset_recreated_under_its_name_adopts_its_predecessors_claims(
    fake_api: FakeApiServer, start_reconciler: Start
) -> None:
    start_reconciler().wait_active()
    first = fake_api.create(podcliqueset("solo", SHARING, replicas=2))
    wait_until(lambda: len(claims(fake_api)) == 3, message="claims of the first solo")
    # Deleted while the garbage collector is behind: the claims still name the first solo.
    fake_api.delete("podcliquesets", "default", "solo", propagation_policy="Orphan")
    for name in ("solo-all-gpu", "solo-0-gpu", "solo-1-gpu"):
        fake_api.patch("resourceclaims", "default", name, {"metadata": {"ownerReferences": [controller(first)]}})

    second = fake_api.create(podcliqueset("solo", SHARING, replicas=1))

    assert second["metadata"]["uid"] != first["metadata"]["uid"]
    wait_until(
        lambda: claims(fake_api) == {"solo-all-gpu": [controller(second)], "solo-0-gpu": [controller(second)]},
        message="claims adopted by the second solo, the one for replica 1 deleted",
    )


def test_nothing_is_written_for_a_podcliqueset_being_deleted(fake_api: FakeApiServer, start_reconciler: Start) -> None:
    running = start_reconciler()
    running.wait_active()
    pcs = podcliqueset("solo", SHARING, replicas=1)
    pcs["metadata"]["finalizers"] = ["example.com/keep"]
    fake_api.create(pcs)
    wait_until(lambda: len(claims(fake_api)) == 2, message="claims created")
    registry = running.controller.metrics.registry

    def reconciles() -> float:
        return registry.get_sample_value("grove_sharing_reconciler_reconciles_total", {"result": "success"}) or 0

    before = reconciles()
    fake_api.delete("podcliquesets", "default", "solo")
    assert fake_api.get("podcliquesets", "default", "solo")["metadata"]["deletionTimestamp"]
    wait_until(lambda: reconciles() > before, message="the deletion reconciled")
    writes, before = running.writes, reconciles()
    fake_api.delete("resourceclaims", "default", "solo-0-gpu")

    # The claim's deletion re-queues solo once its re-creation would be due: it is not re-created.
    wait_until(lambda: reconciles() > before, message="the claim's deletion reconciled")
    assert sorted(claims(fake_api)) == ["solo-all-gpu"]
    assert running.writes == writes
