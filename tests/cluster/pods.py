"""Pods as Grove's operator creates them, created through the real API server."""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

from core.workload import grove_pod
from reconciler.grove import GroveOperator

Obj = dict[str, Any]


def grove_pods(operator: GroveOperator, every_pod: bool = False) -> list[Obj]:
    """Pod 0 (or, with ``every_pod``, every pod) of every PodClique of PodCliqueSet replica 0 (or
    every replica), as Grove's operator creates them: its labels, and its PodClique as controller
    (the uid the API server gave it, so the garbage collector leaves the pod alone)."""
    pcs = operator.current("podcliquesets", operator.name)
    assert pcs is not None
    template = pcs["spec"]["template"]
    grouped = {c: g for g in template.get("podCliqueScalingGroups", []) for c in g["cliqueNames"]}
    pods = []
    for i in range(pcs["spec"]["replicas"] if every_pod else 1):
        for clique in template["cliques"]:
            group = grouped.get(clique["name"])
            group_name = group["name"] if group else None
            for j in range(_group_replicas(operator, i, group) if group else 1):
                fqn = grove_pod(pcs, i, clique["name"], 0, group_name, j)["metadata"]["labels"]["grove.io/podclique"]
                owner = operator.current("podcliques", fqn)
                assert owner is not None, fqn
                for index in range(owner["spec"]["replicas"] if every_pod else 1):
                    pod = grove_pod(pcs, i, clique["name"], index, group_name, j)
                    pod["metadata"]["ownerReferences"][0]["uid"] = owner["metadata"]["uid"]
                    pods.append(pod)
    return pods


def _group_replicas(operator: GroveOperator, i: int, group: Obj) -> int:
    live = operator.current("podcliquescalinggroups", f"{operator.name}-{i}-{group['name']}")
    return int(live["spec"]["replicas"]) if live else int(group.get("replicas", 1))


def create(admin: client.ApiClient, pod: Obj, timeout: float | None = None) -> Obj:
    """The pod as the API server stored it (``timeout``: seconds to wait for the answer, else unbounded)."""
    answer = client.CoreV1Api(admin).create_namespaced_pod(pod["metadata"]["namespace"], pod, _preload_content=False,
                                                           _request_timeout=timeout)
    return dict(json.loads(answer.data))


def claims(pod: Obj) -> dict[str, Any]:
    """Where a pod names its claims: the pod's list and each container's, by container name."""
    spec = pod["spec"]
    containers = spec.get("initContainers", []) + spec["containers"]
    return {
        "spec.resourceClaims": spec.get("resourceClaims", []),
        **{c["name"]: c.get("resources", {}).get("claims", []) for c in containers},
    }
