"""Claims deleted by hand come back; a resync re-queues every PodCliqueSet and costs no API call
when nothing is missing."""

from __future__ import annotations

from fakeapi import FakeApiServer, wait_until

from reconciler.conftest import Start
from reconciler.objects import podcliqueset

SHARING = [{"name": "gpu", "scope": "AllReplicas"}, {"name": "gpu", "scope": "PerReplica"}]


def test_a_claim_deleted_by_hand_is_recreated(fake_api: FakeApiServer, start_reconciler: Start) -> None:
    start_reconciler().wait_active()
    fake_api.create(podcliqueset("solo", SHARING, replicas=2))
    wait_until(lambda: fake_api.get("resourceclaims", "default", "solo-1-gpu") is not None, message="claims created")
    first = fake_api.get("resourceclaims", "default", "solo-1-gpu")

    fake_api.delete("resourceclaims", "default", "solo-1-gpu")

    again = wait_until(lambda: fake_api.get("resourceclaims", "default", "solo-1-gpu"), message="claim re-created")
    assert again["metadata"]["uid"] != first["metadata"]["uid"]
    assert again["metadata"]["labels"] == first["metadata"]["labels"]
    assert again["metadata"]["ownerReferences"] == first["metadata"]["ownerReferences"]
    assert again["spec"] == first["spec"]


def test_resync_reconciles_every_podcliqueset_without_api_calls(fake_api: FakeApiServer, start_reconciler: Start) -> None:
    running = start_reconciler(resync_period=0.2)
    running.wait_active()
    for name in ("one", "two", "three"):
        fake_api.create(podcliqueset(name, SHARING))
    # Six claims created, and an Event on each PodCliqueSet naming its two, answered.
    wait_until(lambda: fake_api.requests.count("POST") == 9, message="claims created and reported")
    registry = running.controller.metrics.registry

    def reconciles() -> float:
        return registry.get_sample_value("grove_sharing_reconciler_reconciles_total", {"result": "success"}) or 0

    fake_api.requests.reset()
    before = reconciles()
    wait_until(lambda: reconciles() >= before + 6, message="two resyncs of three PodCliqueSets")
    assert [r for r in fake_api.requests if not r.is_watch] == []
