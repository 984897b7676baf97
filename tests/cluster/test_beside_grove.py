"""Beside Grove's own operator on the real control plane, the chart's reconciler (``--claims auto``,
the default) running as the chart's ServiceAccount through Grove's end-to-end steps
(BEHAVIOUR.md §7.2), every write counted from the API server's audit log:

- beside an operator that makes the claims, a moment before the reconciler would or a moment
  after (within ``--claims-grace``), the reconciler creates, changes and deletes no claim, the
  claims are Grove's alone at every step, it says so in an Event, and ``status`` says who makes them;
- beside an operator that does not, the reconciler makes every claim, each once.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import orjson
import pytest
from kubernetes import client

from cluster import audit, kube
from cluster.controlplane import ControlPlane
from cluster.groveapi import ClusterApi
from cluster.processes import Command
from cluster.release import Release
from cluster.workloads import as_stored, workload_in
from reconciler.e2e import PCS, STEPS
from reconciler.expected import Claim, Expect, actual
from reconciler.grove import GroveOperator
from reconciler.groveclaims import GroveClaims

SETTLE = 30.0
MOMENT = 1.0
"""Seconds after each step that the operator making claims a moment after the reconciler would
makes them: within the reconciler's grace period (2 s) for a PodCliqueSet nobody has made claims for."""
QUIET = 3.0
"""Seconds the audit log is watched once the PodCliqueSet is gone."""
WRITES = ("create", "update", "patch", "delete", "deletecollection")


def settle(api: ClusterApi, namespace: str, want: dict[str, Claim], label: str) -> None:
    try:
        kube.wait_for(lambda: actual(api, namespace, part_of=PCS) == want, f"the claims after step {label}", SETTLE)  # type: ignore[arg-type]
    finally:
        assert actual(api, namespace, part_of=PCS) == want, label  # type: ignore[arg-type]


def claim_writes(plane: ControlPlane, release: Release, namespace: str) -> list[audit.Request]:
    """The ResourceClaim writes of the release's reconciler in ``namespace``."""
    return [r for r in audit.requests(plane.audit_log)
            if r.component == "reconciler" and r.user.startswith(f"system:serviceaccount:{release.namespace}:")
            and r.resource == "resourceclaims" and r.namespace == namespace and r.verb in WRITES]


def status(plane: ControlPlane, namespace: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "webhook", "status", "--kubeconfig", str(plane.admin), "-n", namespace, *args],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def stepped_back(admin: client.ApiClient, namespace: str) -> list[Any]:
    found = client.CoreV1Api(admin).list_namespaced_event(namespace, field_selector="reason=ResourceClaimsMadeByGrove")
    return [(e.involved_object.kind, e.involved_object.name, e.type) for e in found.items]


@pytest.mark.parametrize("operator", ["before", "after", "none"], ids=[
    "an operator making the claims a moment before the reconciler would",
    "an operator making the claims a moment after the reconciler would",
    "an operator that does not make claims",
])
def test_grove_s_end_to_end_steps(admin: client.ApiClient, control_plane: ControlPlane, release: Release,
                                  reconciling: Command, operator: str) -> None:
    namespace = f"rs-beside-{operator}"
    api, pcs = workload_in(admin, namespace)
    e = Expect(api, PCS, namespace, as_stored(api, namespace))  # type: ignore[arg-type]

    grove = GroveOperator(api, pcs)
    grove_claims = None if operator == "none" else GroveClaims(api, grove)
    made, before = 0, {}
    for step in STEPS:
        step.act(grove)
        if grove_claims is not None and step is not STEPS[-1]:
            if operator == "after":
                time.sleep(MOMENT)  # Grove's operator, a moment late
            grove_claims.reconcile()
        want = step.want(e)
        settle(api, namespace, want, step.label)
        made += len(want.keys() - before.keys())
        before = want
        if step is STEPS[0]:
            line = status(control_plane, namespace).splitlines()[0]
            document = orjson.loads(status(control_plane, namespace, "-o", "json"))
            by = document["podCliqueSets"][0]["claims"]["madeBy"]
            if grove_claims is None:
                assert (by, line) == ("reconciler", f"PodCliqueSet {namespace}/{PCS}: 12 of 12 shared claims, 0 pods: all as they should be")
            else:
                assert (by, line) == ("grove-operator", f"PodCliqueSet {namespace}/{PCS}: 12 of 12 shared claims (made by Grove's "
                                                        "operator), 0 pods: all as they should be")
                kube.wait_for(lambda: stepped_back(admin, namespace) == [("PodCliqueSet", PCS, "Normal")], "the reconciler's Event")

    deadline = time.monotonic() + QUIET
    while time.monotonic() < deadline:
        writes = claim_writes(control_plane, release, namespace)
        if grove_claims is not None:
            assert writes == [], f"the reconciler wrote claims beside an operator that makes them: {writes}"
        else:
            assert sorted({(r.verb, r.code) for r in writes if r.verb == "create"}) == [("create", 201)]
            assert sum(r.verb == "create" for r in writes) == made == 27
            assert {r.verb for r in writes} <= {"create", "delete"}
        time.sleep(0.5)
    assert (stepped_back(admin, namespace) == []) == (grove_claims is None)
