"""``helm uninstall`` with the webhook already stopped, on the real control plane: the chart's
pre-delete hook removes both webhook configurations before anything else goes, so none is left
behind and Grove pods can be created again.

A release of its own (namespace ``rs-gone-system``, its webhooks selecting only ``rs-gone``). No
kubelet runs in the tier, so the test plays it for the hook's pod: the real Job controller makes
the pod, the real scheduler binds it to a Ready Node the test made (tainted so that only the hook,
given the toleration in values, goes there), and the test runs the pod's command with its own
ServiceAccount's token and marks the pod Succeeded, which completes the Job and lets Helm go on.
"""

from __future__ import annotations

import copy
import datetime
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cluster import audit, kube
from cluster.conftest import LOGS
from cluster.controlplane import ControlPlane
from cluster.nodes import create_ready
from cluster.pods import create, grove_pods
from cluster.processes import environment
from cluster.release import ROOT, Release, install
from cluster.test_certificate_controller import selecting
from cluster.tools import Tool
from cluster.workloads import end_to_end

WORKLOADS, NAMESPACE = "rs-gone", "rs-gone-system"
NODE = "hook-node"
TAINT = {"key": "grove-sharing-webhook.test/hooks", "value": "only", "effect": "NoSchedule"}
HOOK_DEADLINE = 60.0


@pytest.fixture
def hook_node(admin: client.ApiClient) -> Iterator[str]:
    """A Ready node only pods tolerating ``TAINT`` go to."""
    create_ready(admin, NODE, [TAINT])
    try:
        yield NODE
    finally:
        client.CoreV1Api(admin).delete_node(NODE)


def hook_values(directory: Path) -> Path:
    values = selecting(WORKLOADS) | {
        "nodeSelector": {"kubernetes.io/hostname": NODE},
        "tolerations": [{"key": TAINT["key"], "operator": "Equal", "value": TAINT["value"], "effect": "NoSchedule"}],
    }
    path = directory / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def bound_hook_pod(admin: client.ApiClient, release: Release) -> client.V1Pod:
    """The hook Job's pod, once the scheduler has bound it."""
    def bound() -> client.V1Pod | None:
        pods = client.CoreV1Api(admin).list_namespaced_pod(release.namespace, label_selector="app.kubernetes.io/component=unregister").items
        return next((p for p in pods if p.spec.node_name), None)

    return kube.wait_for(bound, "the hook's pod bound to a node", HOOK_DEADLINE)


def play_kubelet(admin: client.ApiClient, control_plane: ControlPlane, pod: client.V1Pod, workdir: Path) -> subprocess.CompletedProcess[str]:
    """Runs the pod's command here, as its ServiceAccount, then reports the pod finished as a kubelet
    would: Succeeded when the command exited 0."""
    (container,) = pod.spec.containers
    token = kube.service_account_token(admin, pod.metadata.namespace, pod.spec.service_account_name)
    kubeconfig = control_plane.token_kubeconfig("unregister-hook", token)
    env = environment() | {e.name: e.value for e in container.env or []}
    done = subprocess.run([sys.executable, "-m", "webhook", *container.args, "--kubeconfig", str(kubeconfig)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    (workdir / "hook.log").write_text(done.stdout + done.stderr)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    terminated = {"exitCode": done.returncode, "reason": "Completed" if done.returncode == 0 else "Error",
                  "startedAt": now, "finishedAt": now}
    status = {"phase": "Succeeded" if done.returncode == 0 else "Failed", "conditions": [
        {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now}],
        "containerStatuses": [{"name": container.name, "image": container.image, "imageID": "", "ready": False,
                               "restartCount": 0, "state": {"terminated": terminated}}]}
    client.CoreV1Api(admin).patch_namespaced_pod_status(pod.metadata.name, pod.metadata.namespace, {"status": status})
    return done


def configurations_left(admin: client.ApiClient, name: str) -> list[str]:
    registration = client.AdmissionregistrationV1Api(admin)
    left = []
    for kind, read in (("ValidatingWebhookConfiguration", registration.read_validating_webhook_configuration),
                       ("MutatingWebhookConfiguration", registration.read_mutating_webhook_configuration)):
        try:
            read(name)
        except ApiException as err:
            if err.status != 404:
                raise
            continue
        left.append(kind)
    return left


def test_uninstall_with_the_webhook_stopped_leaves_no_webhook_behind(
    control_plane: ControlPlane, admin: client.ApiClient, helm: Tool, hook_node: str, tmp_path: Path
) -> None:
    kube.create_namespace(admin, WORKLOADS)
    release = install(helm, admin, control_plane, "gone", NAMESPACE, tmp_path, "-f", str(hook_values(tmp_path)))
    LOGS.append(release.server.log)
    release.server.start()
    pod = grove_pods(end_to_end(admin, WORKLOADS))[0]
    assert release.server.stop() == 0
    with pytest.raises(ApiException) as refused:
        create(admin, copy.deepcopy(pod))
    assert "failed calling webhook" in json.loads(refused.value.body)["message"]

    uninstalled: list[object] = []
    uninstall = threading.Thread(target=lambda: uninstalled.append(
        helm("uninstall", release.name, "--namespace", NAMESPACE, "--timeout", "90s", check=False)))
    uninstall.start()
    try:
        hook = bound_hook_pod(admin, release)
        assert hook.spec.node_name == hook_node
        ran = play_kubelet(admin, control_plane, hook, tmp_path)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout == f"deleted ValidatingWebhookConfiguration and MutatingWebhookConfiguration {release.fullname}\n"
    finally:
        uninstall.join(120)
    (done,) = uninstalled
    assert done.returncode == 0, done.stdout + done.stderr  # type: ignore[attr-defined]

    assert configurations_left(admin, release.fullname) == []
    assert create(admin, copy.deepcopy(pod))["metadata"]["uid"], "Grove pods are created again"
    hook_requests = [r for r in audit.requests(control_plane.audit_log) if r.user.endswith(f":{release.fullname}-unregister")]
    assert sorted((r.verb, r.resource, r.code) for r in hook_requests) == [
        ("delete", "mutatingwebhookconfigurations", 200), ("delete", "validatingwebhookconfigurations", 200)]
    assert client.BatchV1Api(admin).list_namespaced_job(NAMESPACE).items == [], "the hook's Job went once it had succeeded"
