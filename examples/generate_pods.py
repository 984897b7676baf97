"""Writes the Pod AdmissionReviews in ``examples/admission/pod-*.json``.

Each pod is built the way Grove builds it from the PodCliqueSet in ``examples/objects/``: the clique
template's pod spec, Grove's labels (BEHAVIOUR.md §4.3, §4.4), ``generateName`` of
``<podclique>-``, hostname and subdomain. The tests build their pods with the same functions, so
the examples are the pods the tests check. Run from the repository root::

    .venv/bin/python examples/generate_pods.py
"""

from __future__ import annotations

import copy
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import yaml

EXAMPLES = Path(__file__).resolve().parent
WORKLOAD = EXAMPLES / "objects" / "workload-resource-sharing.yaml"
POD_KIND = {"group": "", "version": "v1", "kind": "Pod"}


def workload_pcs_raw(replicas: int = 1, namespace: str = "default") -> dict[str, Any]:
    """The PodCliqueSet ``rs-test`` as applied into ``namespace``, with ``spec.replicas`` set."""
    documents = [d for d in yaml.safe_load_all(WORKLOAD.read_text()) if d]
    pcs = copy.deepcopy(next(d for d in documents if d["kind"] == "PodCliqueSet"))
    pcs["metadata"]["namespace"] = namespace
    pcs["spec"]["replicas"] = replicas
    return pcs


def grove_pod(
    pcs: dict[str, Any],
    pcs_replica: int,
    clique: str,
    pod_index: int,
    group: str | None = None,
    group_replica: int = 0,
) -> dict[str, Any]:
    """The pod Grove creates for pod index ``pod_index`` of a clique, before any injection."""
    pcs_name = pcs["metadata"]["name"]
    template = next(c for c in pcs["spec"]["template"]["cliques"] if c["name"] == clique)
    base_gang = f"{pcs_name}-{pcs_replica}"
    gang_labels: dict[str, str] = {}
    if group is None:
        fqn = f"{pcs_name}-{pcs_replica}-{clique}"
        podgang = base_gang
        clique_labels = {"app.kubernetes.io/component": "pcs-podclique"}
    else:
        config = next(g for g in pcs["spec"]["template"]["podCliqueScalingGroups"] if g["name"] == group)
        group_fqn = f"{pcs_name}-{pcs_replica}-{group}"
        fqn = f"{group_fqn}-{group_replica}-{clique}"
        min_available = config.get("minAvailable", 1)
        scaled = group_replica >= min_available
        podgang = f"{group_fqn}-{group_replica - min_available}" if scaled else base_gang
        if scaled:
            gang_labels["grove.io/base-podgang"] = base_gang
        clique_labels = {
            "app.kubernetes.io/component": "pcsg-podclique",
            "grove.io/podcliquescalinggroup": group_fqn,
            "grove.io/podcliquescalinggroup-replica-index": str(group_replica),
        }
    grove = {"app.kubernetes.io/managed-by": "grove-operator", "app.kubernetes.io/part-of": pcs_name}
    pod_labels = {
        **grove,
        **template.get("labels", {}),
        **grove,
        "app.kubernetes.io/name": fqn,
        **clique_labels,
        "grove.io/podcliqueset-replica-index": str(pcs_replica),
        "grove.io/podgang": podgang,
        "grove.io/pod-template-hash": "6b7f9c8d5",
        **gang_labels,
        "grove.io/podclique": fqn,
        "grove.io/podclique-pod-index": str(pod_index),
        "kai.scheduler/subgroup-name": fqn,
    }
    spec = copy.deepcopy(template["spec"]["podSpec"])
    spec["hostname"] = f"{fqn}-{pod_index}"
    spec["subdomain"] = base_gang
    spec["schedulingGates"] = [{"name": "grove.io/podgang-pending-creation"}]
    owner = {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodClique",
        "name": fqn,
        "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, fqn)),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": f"{fqn}-",
            "namespace": pcs["metadata"]["namespace"],
            "labels": pod_labels,
            "ownerReferences": [owner],
        },
        "spec": spec,
    }


def pod_review(pod: dict[str, Any], operation: str = "CREATE", uid: str = "7f0b2c4e-0001") -> dict[str, Any]:
    """A Pod AdmissionReview as the API server sends it to a mutating webhook."""
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": POD_KIND,
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "requestKind": POD_KIND,
            "requestResource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": pod.get("metadata", {}).get("namespace", ""),
            "operation": operation,
            "userInfo": {"username": "system:serviceaccount:grove-system:grove-operator"},
            "object": pod if operation != "DELETE" else None,
            "oldObject": pod if operation in ("UPDATE", "DELETE") else None,
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        },
    }


def worker_a() -> dict[str, Any]:
    """Standalone clique worker-a, pod index 0, PodCliqueSet replica 0."""
    return grove_pod(workload_pcs_raw(), 0, "worker-a", 0)


def worker_b() -> dict[str, Any]:
    """worker-b in replica 1 of scaling group sga."""
    return grove_pod(workload_pcs_raw(), 0, "worker-b", 0, "sga", 1)


def init_containers() -> dict[str, Any]:
    """worker-b in scaling-group replica 0 with an init container of its own and, as Grove adds
    when a clique has ``startsAfter``, ``grove-initc``."""
    pod = grove_pod(workload_pcs_raw(), 0, "worker-b", 0, "sga", 0)
    pod["spec"]["initContainers"] = [
        {"name": "fetch-weights", "image": "registry:5001/busybox:latest", "command": ["true"]},
        {"name": "grove-initc", "image": "ghcr.io/ai-dynamo/grove/grove-initc:latest", "args": ["--podcliques=rs-test-0-worker-a:1"]},
    ]
    return pod


def not_grove() -> dict[str, Any]:
    """A pod of an ordinary Deployment: no Grove labels."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "web-5d7f8c9b6-",
            "namespace": "default",
            "labels": {"app": "web", "pod-template-hash": "5d7f8c9b6"},
        },
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]},
    }


def unknown_pcs() -> dict[str, Any]:
    """A Grove pod of PodCliqueSet ``rs-other``, which the store does not hold."""
    pcs = workload_pcs_raw()
    pcs["metadata"]["name"] = "rs-other"
    return grove_pod(pcs, 0, "worker-a", 0)


def bad_labels() -> dict[str, Any]:
    """worker-a without ``grove.io/podcliqueset-replica-index``: Grove cannot place it."""
    pod = worker_a()
    del pod["metadata"]["labels"]["grove.io/podcliqueset-replica-index"]
    return pod


EXAMPLE_PODS: dict[str, Callable[[], dict[str, Any]]] = {
    "pod-worker-a.json": worker_a,
    "pod-worker-b.json": worker_b,
    "pod-init-containers.json": init_containers,
    "pod-not-grove.json": not_grove,
    "pod-unknown-pcs.json": unknown_pcs,
    "pod-bad-labels.json": bad_labels,
}


def render() -> dict[str, bytes]:
    """File name to content: the review of each example pod, with a uid of its own."""
    return {
        name: orjson.dumps(pod_review(build(), uid=f"c0ffee00-0000-4000-8000-{number:012d}"), option=orjson.OPT_INDENT_2) + b"\n"
        for number, (name, build) in enumerate(EXAMPLE_PODS.items(), start=1)
    }


def main() -> int:
    out = EXAMPLES / "admission"
    for name, content in render().items():
        (out / name).write_bytes(content)
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
