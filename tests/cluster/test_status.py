"""``webhook status`` on the real control plane: Grove's end-to-end workload broken in each way the
command must explain (a template deleted, a claim deleted while the reconciler is stopped, a claim
of a shared claim's name made by someone else, an owner over the claim limit, a pod admitted while
the webhook was down under ``failurePolicy: Ignore``) makes it name the problem and exit 1; once the
workload is repaired it exits 0. Run as ``kubectl grove-sharing status``, kubectl's plugin, too.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from kubernetes import client

from cluster import kube
from cluster.controlplane import ControlPlane
from cluster.groveapi import ClusterApi
from cluster.pods import create, grove_pods
from cluster.processes import Command
from cluster.release import CHART, Release
from cluster.tools import Tool
from cluster.workloads import INITIAL, claims, end_to_end, wait_for_claims
from reconciler.e2e import PCS
from reconciler.grove import GroveOperator, workload
from status.readme import status_role

Obj = dict[str, Any]
SETTLE = 60.0
"""Seconds for the reconciler to act (a restarted one first waits for the Lease)."""


def status(plane: ControlPlane, namespace: str, *args: str) -> tuple[int, Obj]:
    """``python -m webhook status -n NAMESPACE -o json``: its exit code and document."""
    done = subprocess.run(
        [sys.executable, "-m", "webhook", "status", "--kubeconfig", str(plane.admin), "-n", namespace, "-o", "json", *args],
        capture_output=True, timeout=60, check=False,
    )
    assert done.returncode in (0, 1), done.stderr.decode()
    return done.returncode, orjson.loads(done.stdout)


def findings(document: Obj) -> list[Obj]:
    return [f for pcs in document["podCliqueSets"] for f in pcs["findings"]]


def until(plane: ControlPlane, namespace: str, what: str, check: Any, *args: str) -> list[Obj]:
    """The findings once ``check(code, findings)`` holds, polled."""
    last: list[Obj] = []

    def seen() -> bool:
        code, document = status(plane, namespace, *args)
        last[:] = findings(document)
        return bool(check(code, last))

    try:
        kube.wait_for(seen, what, SETTLE, interval=0.5)
    except AssertionError as err:
        raise AssertionError(f"{err}; status found last: {last}") from None
    return last


def healthy(plane: ControlPlane, namespace: str) -> None:
    until(plane, namespace, f"status exiting 0 for {namespace}", lambda code, found: code == 0 and not found)


OPERATORS: dict[str, GroveOperator] = {}
"""Grove's operator (as the tests play it) of each namespace made by ``broken``."""


@pytest.fixture
def broken(admin: client.ApiClient, reconciling: Command, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace of its own with the end-to-end workload and all its claims."""
    namespace = f"rs-status-{request.node.name.removeprefix('test_')[:40].replace('_', '-').rstrip('-')}"
    OPERATORS[namespace] = end_to_end(admin, namespace)
    wait_for_claims(ClusterApi(admin), namespace, INITIAL)
    yield namespace


def test_a_workload_with_every_claim_is_one_line_and_exit_0(control_plane: ControlPlane, broken: str) -> None:
    healthy(control_plane, broken)
    done = subprocess.run([sys.executable, "-m", "webhook", "status", "--kubeconfig", str(control_plane.admin), "-n", broken],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"PodCliqueSet {broken}/{PCS}: {INITIAL} of {INITIAL} shared claims, 0 pods: all as they should be\n"


def test_a_deleted_template_is_named_with_the_reconcilers_event(admin: client.ApiClient, control_plane: ControlPlane, broken: str) -> None:
    api = ClusterApi(admin)
    api.delete("resourceclaimtemplates", broken, "ext-tpl")
    name = f"{PCS}-0-ext-tpl"
    last: list[Obj] = []

    def reported() -> bool:
        if name in claims(api, broken):  # made again from the reconciler's template cache (5 s)
            api.delete("resourceclaims", broken, name)
        code, document = status(control_plane, broken)
        last[:] = findings(document)
        return code == 1 and len(last) == 1 and bool(last[0]["lastEvent"])

    kube.wait_for(reported, "the claim of the deleted template reported with the reconciler's Event", SETTLE, interval=0.5)
    assert last[0]["problem"] == "ClaimMissing" and last[0]["object"] == f"ResourceClaim {broken}/{name}"
    assert f"its ResourceClaimTemplate {broken}/ext-tpl does not exist" in last[0]["message"]
    assert last[0]["lastEvent"]["reason"] == "ResourceClaimTemplateNotFound"

    template, _ = workload()
    api.create({**template, "metadata": {**template["metadata"], "namespace": broken}})
    healthy(control_plane, broken)


def test_a_claim_deleted_while_the_reconciler_is_stopped(admin: client.ApiClient, control_plane: ControlPlane,
                                                         reconciling: Command, broken: str) -> None:
    api = ClusterApi(admin)
    assert reconciling.stop() == 0
    try:
        name = sorted(claims(api, broken))[0]
        api.delete("resourceclaims", broken, name)
        code, document = status(control_plane, broken)
        assert code == 1
        assert [(f["problem"], f["object"]) for f in findings(document)] == [("ClaimMissing", f"ResourceClaim {broken}/{name}")]
        assert "not created yet" in findings(document)[0]["message"]
    finally:
        reconciling.start()
    healthy(control_plane, broken)


def test_a_claim_of_that_name_made_by_someone_else(admin: client.ApiClient, control_plane: ControlPlane,
                                                   reconciling: Command, broken: str) -> None:
    api = ClusterApi(admin)
    config_map = client.CoreV1Api(admin).create_namespaced_config_map(broken, {"metadata": {"name": "impostor"}})
    assert reconciling.stop() == 0
    try:
        name = f"{PCS}-0-ext-tpl"
        taken = copy.deepcopy(claims(api, broken)[name])
        api.delete("resourceclaims", broken, name)
        kube.wait_for(lambda: name not in claims(api, broken), "the claim gone")
        other = {"apiVersion": "v1", "kind": "ConfigMap", "name": "impostor", "uid": config_map.metadata.uid, "controller": True}
        api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": name, "namespace": broken, "ownerReferences": [other]}, "spec": taken["spec"]})
    finally:
        reconciling.start()
    found = until(control_plane, broken, "the claim reported as someone else's", lambda code, found: code == 1 and found)
    assert [(f["problem"], f["object"]) for f in found] == [("ClaimMissing", f"ResourceClaim {broken}/{name}")]
    assert "controlled by ConfigMap impostor" in found[0]["message"]
    api.delete("resourceclaims", broken, name)
    healthy(control_plane, broken)


def test_an_owner_over_the_claim_limit(control_plane: ControlPlane, broken: str) -> None:
    code, document = status(control_plane, broken, "--max-claims-per-owner", "1")
    assert code == 1
    over = [f for f in findings(document) if f["problem"] == "OwnerOverLimit"]
    assert over and all("more than the limit of 1 (--max-claims-per-owner)" in f["message"] for f in over)
    assert {f["problem"] for f in findings(document)} == {"OwnerOverLimit"}, "claims past the limit are not called stale"
    healthy(control_plane, broken)


def bind(admin: client.ApiClient, pod: Obj, node: str) -> None:
    """Places the pod on ``node`` as a scheduler would (a Binding)."""
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod["metadata"]["name"]},
               "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
    client.CoreV1Api(admin).create_namespaced_pod_binding(pod["metadata"]["name"], pod["metadata"]["namespace"], binding,
                                                           _preload_content=False)


def test_a_pod_admitted_while_the_webhook_was_down_under_ignore(admin: client.ApiClient, control_plane: ControlPlane,
                                                                helm: Tool, release: Release, broken: str) -> None:
    pod = grove_pods(OPERATORS[broken])[0]
    ignore = ["--set", "webhooks.mutating.failurePolicy=Ignore"]
    helm("upgrade", release.name, str(CHART), "--namespace", release.namespace, *release.values, *ignore)
    try:
        assert release.server.stop() == 0
        try:
            admitted = kube.wait_for(lambda: _admitted(admin, pod), "the pod admitted without the webhook")
        finally:
            release.server.start()
    finally:
        helm("upgrade", release.name, str(CHART), "--namespace", release.namespace, *release.values)
    assert "resourceClaims" not in admitted["spec"]
    found = until(control_plane, broken, "the pod reported", lambda code, found: code == 1 and found)
    assert [(f["problem"], f["object"]) for f in found] == [("PodMissingClaims", f"Pod {broken}/{admitted['metadata']['name']}")]
    assert "admitted while it was down under failurePolicy Ignore" in found[0]["message"]

    client.CoreV1Api(admin).delete_namespaced_pod(admitted["metadata"]["name"], broken, grace_period_seconds=0)
    again = create(admin, copy.deepcopy(pod))
    assert again["spec"]["resourceClaims"] and again["spec"]["schedulingGates"]
    healthy(control_plane, broken)  # gated by Grove until its gang can be placed: not waiting on its claims
    ungate = [{"op": "remove", "path": "/spec/schedulingGates"}]
    client.CoreV1Api(admin).patch_namespaced_pod(again["metadata"]["name"], broken, ungate)
    waiting = until(control_plane, broken, "the new pod waiting on claims not allocated",
                    lambda code, found: code == 1 and found and {f["problem"] for f in found} == {"ClaimNotAllocated"})
    assert all(again["metadata"]["name"] in f["message"] for f in waiting)
    bind(admin, again, "status-node")
    healthy(control_plane, broken)


def _admitted(admin: client.ApiClient, pod: Obj) -> Obj | None:
    try:
        return create(admin, copy.deepcopy(pod), timeout=15)
    except client.ApiException as err:
        if "failed calling webhook" in str(err.body):
            return None
        raise


def test_kubectl_runs_it_as_a_plugin(control_plane: ControlPlane, kubectl: Tool, broken: str) -> None:
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    env = {"PATH": path, "HOME": str(kubectl.home), "KUBECONFIG": str(control_plane.admin)}
    done = subprocess.run([str(kubectl.binary), "grove-sharing", "status", "-n", broken], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"PodCliqueSet {broken}/{PCS}: ")
    usage = subprocess.run([str(kubectl.binary), "grove-sharing", "status", "--bogus"], capture_output=True, text=True,
                           env=env, timeout=60, check=False)
    assert usage.returncode == 2
    assert usage.stderr.startswith("kubectl grove-sharing status: error: unrecognized arguments: --bogus")


def test_the_live_state_recipe_of_the_configuration_docs(control_plane: ControlPlane, kubectl: Tool, broken: str,
                                                        tmp_path: Path) -> None:
    """docs/configuration.md's ``kubectl get ... >> now.yaml`` recipe, then ``claims now.yaml``:
    the claims the reconciler made."""
    now = tmp_path / "now.yaml"
    text = kubectl("get", "podcliqueset", PCS, "-n", broken, "-o", "yaml").stdout + "---\n"
    text += kubectl("get", "podcliquescalinggroups,podcliques", "-n", broken, "-l", f"app.kubernetes.io/part-of={PCS}",
                    "-o", "yaml").stdout
    now.write_text(text)
    done = subprocess.run([sys.executable, "-m", "webhook", "claims", str(now), "--output", "json"], capture_output=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert len(orjson.loads(done.stdout)["claims"]) == INITIAL


def test_the_readme_role_is_all_it_needs(admin: client.ApiClient, control_plane: ControlPlane, broken: str) -> None:
    role = status_role()
    role["metadata"]["namespace"] = broken
    client.RbacAuthorizationV1Api(admin).create_namespaced_role(broken, role)
    binding = {"metadata": {"name": "oncall-status", "namespace": broken},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role["metadata"]["name"]},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "oncall"}]}
    client.RbacAuthorizationV1Api(admin).create_namespaced_role_binding(broken, binding)
    oncall = control_plane.kubeconfig("oncall")

    def answered() -> subprocess.CompletedProcess[str] | None:
        done = subprocess.run([sys.executable, "-m", "webhook", "status", "--kubeconfig", str(oncall), "-n", broken],
                              capture_output=True, text=True, timeout=60, check=False)
        return done if done.returncode == 0 else None  # the authorizer sees a new binding a moment later

    done = kube.wait_for(answered, "status run by a user with the README's Role alone")
    assert done.stdout.startswith(f"PodCliqueSet {broken}/{PCS}: {INITIAL} of {INITIAL} shared claims")
    refused = subprocess.run([sys.executable, "-m", "webhook", "status", "--kubeconfig", str(oncall), "-A"],
                             capture_output=True, text=True, timeout=60, check=False)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "cannot list podcliquesets.grove.io across namespaces: " in refused.stderr, refused.stderr
