"""Every API call the reconciler makes is in its access table, and every grant in the table is
used: the chart's RBAC, written from the table, is exactly what the code needs."""

from __future__ import annotations

from fakeapi import FakeApiServer, wait_until

from reconciler.conftest import Start
from reconciler.grove import GroveOperator, ext_ns_template, workload
from reconciler.objects import claim, podcliqueset
from webhook.kube.access import ACCESS, Component

LEASE = {"leader_elect": True, "lease_duration": 3, "renew_deadline": 2, "retry_period": 1}


def declared() -> set[tuple[str, str, str]]:
    return {(r.resource.group, r.resource.plural, verb) for r in ACCESS[Component.RECONCILER] for verb in r.verbs}


def test_the_reconciler_uses_exactly_its_access_table(fake_api: FakeApiServer, start_reconciler: Start) -> None:
    fake_api.create(claim("solo-all-gpu", {"team": "a"}))  # adopted: create 409, get, patch
    fake_api.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "ext", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": []}}},
        }
    )
    running = start_reconciler(**LEASE)
    running.wait_active()
    fake_api.create(
        podcliqueset("solo", [{"name": "gpu", "scope": "AllReplicas"}, {"name": "ext", "scope": "PerReplica"}], replicas=2)
    )
    fake_api.create(podcliqueset("broken", [{"name": "missing", "scope": "AllReplicas"}]))  # repeated Event
    wait_until(lambda: fake_api.get("resourceclaims", "default", "solo-1-ext") is not None, message="claims created")
    fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": 1}})  # a stale claim to delete
    # Stale claims of a scaling group and of a PodClique: their owners are read before the deletes.
    ext_tpl, pcs = workload()
    fake_api.create(ext_ns_template())
    fake_api.create({**ext_tpl, "metadata": {**ext_tpl["metadata"], "namespace": "default"}})
    grove = GroveOperator(fake_api, pcs)
    grove.sync()
    grove.scale("podcliques", "rs-test-0-worker-a", 2)
    wait_until(lambda: fake_api.get("resourceclaims", "default", "rs-test-0-worker-a-1-int-tpl4"), message="scaled out")
    grove.scale("podcliques", "rs-test-0-worker-a", 1)
    grove.scale("podcliquescalinggroups", "rs-test-0-sga", 1)

    access = running.controller.api.access
    wait_until(lambda: set(access.calls) == declared(), timeout=30, message="every grant used")
    assert set(access.calls) == declared()
