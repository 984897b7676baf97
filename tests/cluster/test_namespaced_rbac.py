"""Namespaced RBAC suffices, on the real API server: a release told its workloads live in one
namespace (``server.namespaces``, ``reconciler.namespaces``: ``rs-tenant``) gets its access there as
Roles, and only what cannot be namespaced as ClusterRoles. Its webhook and reconciler, each running
as the release's ServiceAccount, play Grove's end-to-end scenario (BEHAVIOUR.md §7.2, every step of
the reconciler's tests) in that namespace, its external template in another: after every step the
claims are exactly Grove's, and the audit log shows no request of the release refused.

The session's reconciler, which watches every namespace, is stopped meanwhile, so that the tenant's
does the work; the session's webhooks still see ``rs-tenant`` and answer as ever.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from cluster import audit, kube
from cluster.conftest import LOGS
from cluster.controlplane import ControlPlane
from cluster.groveapi import ClusterApi
from cluster.processes import Command, reconciler
from cluster.release import Release, install
from cluster.test_certificate_controller import selecting
from cluster.test_reconciler_scenario import as_stored, create_ignoring_conflict
from cluster.tools import Tool
from reconciler.e2e import PCS, STEPS
from reconciler.expected import Expect, actual
from reconciler.grove import GroveOperator, ext_ns_template, workload

WORKLOADS, NAMESPACE = "rs-tenant", "rs-tenant-system"
SETTLE = 30.0


@pytest.fixture
def tenant(control_plane: ControlPlane, admin: client.ApiClient, helm: Tool, reconciling: Command,
           tmp_path: Path) -> Iterator[tuple[Release, Command]]:
    """The tenant's release, its webhook and reconciler running; the session's reconciler stopped."""
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(selecting(WORKLOADS) | {"server": {"namespaces": [WORKLOADS]},
                                                             "reconciler": {"namespaces": [WORKLOADS]}}))
    for namespace in (WORKLOADS, "rs-shared"):
        kube.create_namespace(admin, namespace)
    release = install(helm, admin, control_plane, "tenant", NAMESPACE, tmp_path, "-f", str(values))
    release.server.command.args += ["--namespace", WORKLOADS]
    tenants = reconciler(release.kubeconfig, NAMESPACE, tmp_path / "reconcile.log", "--namespace", WORKLOADS)
    LOGS.extend((release.server.log, tenants.log))
    reconciling.stop()
    try:
        release.server.start()
        tenants.start()
        yield release, tenants
    finally:
        for process in (tenants, release.server.command):
            if process.running():
                process.stop()
        reconciling.start()
        helm("uninstall", release.name, "--namespace", NAMESPACE, "--no-hooks")


def test_namespaced_roles_suffice_for_the_end_to_end_scenario(control_plane, admin, tenant):
    release, tenants = tenant
    api = ClusterApi(admin)
    create_ignoring_conflict(api, ext_ns_template())
    ext_tpl, pcs = workload()
    api.create({**ext_tpl, "metadata": {**ext_tpl["metadata"], "namespace": WORKLOADS}})
    pcs["metadata"]["namespace"] = WORKLOADS
    expect = Expect(api, PCS, WORKLOADS, as_stored(api, WORKLOADS))  # type: ignore[arg-type]
    grove = GroveOperator(api, pcs)
    for step in STEPS:
        step.act(grove)
        want = step.want(expect)
        kube.wait_for(lambda: actual(api, WORKLOADS, part_of=PCS) == want, f"the claims after step {step.label}", SETTLE)  # type: ignore[arg-type]
    assert "created" in tenants.text() and "deleted" in tenants.text(), "the tenant's reconciler did the work"

    requests = [r for r in audit.requests(control_plane.audit_log) if r.user.startswith(f"system:serviceaccount:{NAMESPACE}:")]
    refused = [r for r in requests if r.code == 403 and r.authorization != "allow"  # not a namespace being deleted
               and not any(start <= r.received <= ready for start, ready in control_plane.startups)]
    assert not refused, f"the API server refused: {refused[:5]}"
    workload_requests = {(r.component, r.verb, r.resource) for r in requests if r.namespace == WORKLOADS}
    assert {("webhook", "list", "podcliquesets"), ("reconciler", "create", "resourceclaims"),
            ("reconciler", "delete", "resourceclaims")} <= workload_requests
    assert {r.namespace for r in requests if r.component == "reconciler" and r.resource == "resourceclaims"} == {WORKLOADS}
