"""Leader election on the real API server's Leases: of two reconcilers one writes; when the leader
is killed (``kill -9``) the other takes over within the lease duration and converges with no
duplicate write; a leader stopped with SIGTERM hands over at once."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

from kubernetes import client

from cluster import audit, kube
from cluster.controlplane import ControlPlane
from cluster.groveapi import ClusterApi
from cluster.processes import LEASE, Command, reconciler
from cluster.release import Release
from cluster.workloads import INITIAL, end_to_end, wait_for_claims
from reconciler.e2e import PCS, STEPS

NAMESPACE = "rs-leader"
LEASE_DURATION, RETRY_PERIOD = 15.0, 2.0
"""The reconciler's defaults, which the chart keeps."""
SCALED = next(step.count for step in STEPS if step.groups == {0: 3, 1: 2})


def identity(process: Command) -> str:
    started = kube.wait_for(lambda: re.search(r"reconciler (\S+) started", process.text()), "the reconciler to start")
    return started.group(1)


def holder(admin: client.ApiClient, namespace: str) -> str | None:
    lease = client.CoordinationV1Api(admin).read_namespaced_lease(LEASE, namespace)
    return lease.spec.holder_identity or None


def test_one_leader_writes_and_another_takes_over(
    control_plane: ControlPlane, admin: client.ApiClient, release: Release, reconciling: Command, tmp_path: Path
) -> None:
    first = identity(reconciling)
    kube.wait_for(lambda: holder(admin, release.namespace) == first, "the first reconciler to lead")
    standby = reconciler(release.kubeconfig, release.namespace, tmp_path / "standby.log")
    standby.start()
    try:
        second = identity(standby)
        grove = end_to_end(admin, NAMESPACE)
        api = ClusterApi(admin)
        wait_for_claims(api, NAMESPACE, INITIAL)
        assert "created" not in standby.text(), "the standby wrote"

        reconciling.stop(signal.SIGKILL)
        killed = time.monotonic()
        grove.scale("podcliquesets", PCS, 2)
        grove.scale("podcliquescalinggroups", f"{PCS}-0-sga", 3)
        kube.wait_for(lambda: holder(admin, release.namespace) == second, "the standby to take over",
                      LEASE_DURATION + 2 * RETRY_PERIOD + 5)
        assert time.monotonic() - killed <= LEASE_DURATION + 2 * RETRY_PERIOD + 1
        wait_for_claims(api, NAMESPACE, SCALED)

        writes = [r for r in audit.requests(control_plane.audit_log)
                  if r.namespace == NAMESPACE and r.resource == "resourceclaims" and r.verb not in ("get", "list", "watch")]
        assert sorted((r.verb, r.code) for r in writes) == [("create", 201)] * SCALED, "a claim written twice"

        reconciling.start()
        third = identity(reconciling)
        assert standby.stop() == 0
        stopped = time.monotonic()
        kube.wait_for(lambda: holder(admin, release.namespace) == third, "the restarted reconciler to take over",
                      2 * RETRY_PERIOD + 3)
        assert time.monotonic() - stopped <= 2 * RETRY_PERIOD + 1
    finally:
        if standby.running():
            standby.stop()
        if not reconciling.running():
            reconciling.start()
