"""The real kube-apiserver stopped for 15 s in the middle of a scale-out, then started again on the
same etcd: the reconciler converges within 5 s of its return, with every claim there exactly once,
as Grove would have it, and says what happened in a bounded number of log lines."""

from __future__ import annotations

import re
import time

from kubernetes import client

from cluster import kube
from cluster.controlplane import ControlPlane
from cluster.groveapi import ClusterApi
from cluster.processes import Command
from cluster.release import Release
from cluster.workloads import INITIAL, claims, end_to_end, wait_for_claims
from reconciler.e2e import PCS, expected
from reconciler.expected import Expect, actual

NAMESPACE = "rs-outage"
REPLICAS = 20
OUTAGE = 15.0
CONVERGED = 5.0
MOST_LINES = 40


def test_the_reconciler_converges_soon_after_the_api_server_returns(
    control_plane: ControlPlane, admin: client.ApiClient, release: Release, reconciling: Command
) -> None:
    grove = end_to_end(admin, NAMESPACE)
    api = ClusterApi(admin)
    wait_for_claims(api, NAMESPACE, INITIAL)
    lines_before = len(reconciling.text().splitlines())

    grove.scale("podcliquesets", PCS, REPLICAS)
    control_plane.stop_apiserver()
    stopped = time.monotonic()
    kube.wait_for(lambda: time.monotonic() - stopped >= OUTAGE, "the outage to last", OUTAGE + 5, interval=1)
    control_plane.start_apiserver()
    back = time.monotonic()

    want = expected(Expect(api, PCS, NAMESPACE), {i: 2 for i in range(REPLICAS)})  # type: ignore[arg-type]
    kube.wait_for(lambda: set(claims(api, NAMESPACE)) == set(want), "every claim of the scale-out", 30)
    assert time.monotonic() - back <= CONVERGED, f"converged {time.monotonic() - back:.1f} s after the API server returned"
    assert {n: c[:2] for n, c in actual(api, NAMESPACE, part_of=PCS).items()} == {n: c[:2] for n, c in want.items()}  # type: ignore[arg-type]
    assert reconciling.running() and release.server.running()
    # Lines about PodCliqueSets of other tests (whose templates are missing) are not the outage's.
    others = re.compile(rf"PodCliqueSet (?!{NAMESPACE}/)\S+/")
    written = [line for line in reconciling.text().splitlines()[lines_before:] if not others.search(line)]
    assert len(written) <= MOST_LINES, f"{len(written)} log lines for one outage:\n" + "\n".join(written)
