"""Pods as Grove's operator creates them, created through the real API server."""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

from core.workload import grove_pod
from reconciler.grove import GroveOperator

Obj = dict[str, Any]


def grove_pods(operator: GroveOperator) -> list[Obj]:
    """Pod 0 of every PodClique, as Grove's operator creates it: its labels, and its PodClique as
    controller (the uid the API server gave it, so the garbage collector leaves the pod alone)."""
    pcs = operator.current("podcliquesets", operator.name)
    assert pcs is not None
    template = pcs["spec"]["template"]
    grouped = {c: g for g in template.get("podCliqueScalingGroups", []) for c in g["cliqueNames"]}
    pods = []
    for clique in template["cliques"]:
        group = grouped.get(clique["name"])
        for replica in range(group.get("replicas", 1) if group else 1):
            pod = grove_pod(pcs, 0, clique["name"], 0, group["name"] if group else None, replica)
            owner = operator.current("podcliques", pod["metadata"]["labels"]["grove.io/podclique"])
            assert owner is not None
            pod["metadata"]["ownerReferences"][0]["uid"] = owner["metadata"]["uid"]
            pods.append(pod)
    return pods


def create(admin: client.ApiClient, pod: Obj) -> Obj:
    """The pod as the API server stored it."""
    answer = client.CoreV1Api(admin).create_namespaced_pod(pod["metadata"]["namespace"], pod, _preload_content=False)
    return dict(json.loads(answer.data))


def claims(pod: Obj) -> dict[str, Any]:
    """Where a pod names its claims: the pod's list and each container's, by container name."""
    spec = pod["spec"]
    containers = spec.get("initContainers", []) + spec["containers"]
    return {
        "spec.resourceClaims": spec.get("resourceClaims", []),
        **{c["name"]: c.get("resources", {}).get("claims", []) for c in containers},
    }
