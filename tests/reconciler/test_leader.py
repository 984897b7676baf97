"""Leader election: only the holder of the Lease writes; a released lease moves at once; a lost
lease ends the controller (``run`` returns 1, and the command campaigns again) before it writes
again; an API server out of reach does not end a campaign."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from fakeapi import CuttableProxy, FakeApiServer, wait_until
from reconciler.conftest import Start
from reconciler.objects import podcliqueset

LEASE = {"leader_elect": True, "lease_duration": 3, "renew_deadline": 2, "retry_period": 1}
SHARING = [{"name": "gpu", "scope": "AllReplicas"}, {"name": "gpu", "scope": "PerReplica"}]


def claim_writes(running: Any) -> int:
    calls = running.controller.api.access.calls
    return sum(n for (_, plural, verb), n in calls.items() if plural == "resourceclaims" and verb not in ("get", "list", "watch"))


def server_claim_writes(fake_api: FakeApiServer) -> int:
    return sum(fake_api.requests.count(method, "/resourceclaims") for method in ("POST", "PUT", "PATCH", "DELETE"))


def holder(fake_api: FakeApiServer) -> str | None:
    lease = fake_api.get("leases", "default", "grove-sharing-reconciler")
    return lease["spec"].get("holderIdentity") if lease else None


def test_only_the_leader_writes_and_a_released_lease_moves_to_the_standby(
    fake_api: FakeApiServer, start_reconciler: Start
) -> None:
    a = start_reconciler("reconciler-a", **LEASE)
    a.wait_active()
    b = start_reconciler("reconciler-b", **LEASE)
    wait_until(lambda: b.controller.readiness() is None, message="standby ready")
    assert holder(fake_api) == "reconciler-a" and not b.controller.active

    fake_api.create(podcliqueset("solo", SHARING, replicas=3))
    wait_until(lambda: len(fake_api.list("resourceclaims", "default")) == 4, message="claims created")
    assert (claim_writes(a), claim_writes(b)) == (4, 0)
    assert server_claim_writes(fake_api) == 4
    registry = b.controller.metrics.registry
    assert registry.get_sample_value("grove_sharing_reconciler_leader") == 0

    assert a.stop() == 0
    wait_until(lambda: b.controller.active, timeout=5, message="standby takes over")
    assert holder(fake_api) == "reconciler-b"
    fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": 1}})
    wait_until(lambda: len(fake_api.list("resourceclaims", "default")) == 2, message="stale claims deleted")
    assert (claim_writes(a), claim_writes(b)) == (4, 2)
    assert server_claim_writes(fake_api) == 6
    assert registry.get_sample_value("grove_sharing_reconciler_leader") == 1


def test_a_lost_lease_stops_reconciling_and_exits_1(fake_api: FakeApiServer, start_reconciler: Start) -> None:
    a = start_reconciler("reconciler-a", **LEASE)
    a.wait_active()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    fake_api.patch(
        "leases",
        "default",
        "grove-sharing-reconciler",
        {"spec": {"holderIdentity": "someone-else", "renewTime": now, "acquireTime": now}},
    )

    wait_until(lambda: a.exit_code is not None, timeout=8, message="the reconciler ends")
    assert a.exit_code == 1
    fake_api.create(podcliqueset("solo", SHARING))
    assert claim_writes(a) == 0
    assert fake_api.list("resourceclaims", "default") == []


def test_a_standby_campaigns_on_after_the_api_server_was_unreachable(
    fake_api: FakeApiServer, start_reconciler: Start, tmp_path: Path
) -> None:
    """A request for the lease that gets no answer is a failed attempt, not the end of the
    campaign: after an outage the standby still takes over a released lease."""
    a = start_reconciler("reconciler-a", **LEASE)
    a.wait_active()
    with CuttableProxy((fake_api.host, fake_api.port)) as proxy:
        b = start_reconciler("reconciler-b", kubeconfig=proxy.write_kubeconfig(tmp_path / "kubeconfig"), **LEASE)
        wait_until(lambda: b.controller.readiness() is None, message="standby ready")
        proxy.cut()
        wait_until(lambda: b.controller.readiness() is not None, timeout=8, message="the standby sees the outage")
        proxy.restore()
        assert a.stop() == 0
        wait_until(lambda: holder(fake_api) == "reconciler-b", timeout=8, message="the standby takes over")
        b.wait_active()
