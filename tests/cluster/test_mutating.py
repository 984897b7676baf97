"""The mutating webhook as the real kube-apiserver calls it: Grove pods are stored with their shared
claims, read back from the API server; other pods, and pods where the chart does not send them,
are stored as they were sent."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml
from kubernetes import client

from cluster.pods import claims, create, grove_pods
from core.workload import pod_review
from reconciler.grove import GroveOperator

Obj = dict[str, Any]

WORKER_A_CLAIMS = [
    "rs-test-all-int-tpl5",
    "rs-test-0-ext-tpl",
    "rs-test-0-int-tpl",
    "rs-test-0-worker-a-all-ext-ns-tpl",
    "rs-test-0-worker-a-0-int-tpl4",
]
"""The README's mutating example: pod 0 of clique worker-a, replica 0."""


def reviewed(pod: Obj, pcs: Obj, workdir: Path) -> Obj:
    """The pod after the patch ``python -m webhook review`` answers for it, given its PodCliqueSet."""
    objects, review = workdir / "pcs.yaml", workdir / "review.json"
    objects.write_text(yaml.safe_dump(pcs))
    review.write_text(json.dumps(pod_review(pod)))
    done = subprocess.run([sys.executable, "-m", "webhook", "review", str(review), "--objects", str(objects)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    response = json.loads(done.stdout)["response"]
    patch = json.loads(base64.b64decode(response["patch"])) if "patch" in response else []
    return dict(jsonpatch.apply_patch(pod, patch))


def test_grove_pods_are_stored_with_their_claims_in_groves_order(
    workload: GroveOperator, admin: client.ApiClient, tmp_path: Path
) -> None:
    pcs = workload.current("podcliquesets", workload.name)
    assert pcs is not None
    pods = grove_pods(workload)
    assert len(pods) >= 3
    for pod in pods:
        stored = create(admin, copy.deepcopy(pod))
        expected = reviewed(pod, pcs, tmp_path)
        assert claims(stored) == claims(expected), pod["metadata"]["labels"]["grove.io/podclique"]
        assert claims(stored)["spec.resourceClaims"], "a pod of this workload shares at least one claim"
        if pod["metadata"]["labels"]["grove.io/podclique"] == "rs-test-0-worker-a":
            assert [c["resourceClaimName"] for c in stored["spec"]["resourceClaims"]] == WORKER_A_CLAIMS


def test_init_containers_get_the_claims_too(workload: GroveOperator, admin: client.ApiClient) -> None:
    pod = grove_pods(workload)[0]
    pod["spec"]["initContainers"] = [{"name": "setup", "image": "busybox", "command": ["true"]}]
    stored = create(admin, pod)
    found = claims(stored)
    names = [c["name"] for c in found["spec.resourceClaims"]]
    assert names and found["setup"] == [{"name": n} for n in names]


def test_a_pod_that_already_has_its_claims_is_stored_unchanged(workload: GroveOperator, admin: client.ApiClient) -> None:
    first = create(admin, grove_pods(workload)[0])
    again = grove_pods(workload)[0]
    again["spec"] = copy.deepcopy(first["spec"])
    for field in ("nodeName", "serviceAccountName", "serviceAccount", "volumes"):
        again["spec"].pop(field, None)
    for container in again["spec"]["containers"]:
        container.pop("volumeMounts", None)
    assert claims(create(admin, again)) == claims(first)


def test_a_pod_not_of_grove_is_stored_unchanged(workload: GroveOperator, admin: client.ApiClient) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "plain-", "namespace": workload.namespace,
                                                            "labels": {"app.kubernetes.io/part-of": "rs-test"}},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    assert "resourceClaims" not in create(admin, pod)["spec"]


@pytest.mark.parametrize("namespace", ["grove-sharing-webhook", "kube-system"])
def test_grove_pods_where_the_chart_sends_none_are_stored_unchanged(
    workload: GroveOperator, admin: client.ApiClient, namespace: str
) -> None:
    pod = grove_pods(workload)[0]
    pod["metadata"]["namespace"] = namespace
    del pod["metadata"]["ownerReferences"]
    assert "resourceClaims" not in create(admin, pod)["spec"]
