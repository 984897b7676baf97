"""Nodes a test makes Ready by hand: no kubelet runs in the tier, and the node lifecycle controller
is left out, so a Node object with a Ready condition stays Ready and the scheduler binds pods to it."""

from __future__ import annotations

import datetime
from typing import Any

from kubernetes import client

Obj = dict[str, Any]


def node(name: str) -> Obj:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    resources = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": resources, "allocatable": resources, "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "made by the test",
                 "lastHeartbeatTime": now, "lastTransitionTime": now}]}}


def create_ready(admin: client.ApiClient, name: str, taints: list[Obj] | None = None) -> None:
    """A Ready node carrying ``taints`` (and only those)."""
    core = client.CoreV1Api(admin)
    core.create_node(node(name))
    # The TaintNodesByCondition admission plugin marks a new node not-ready; a kubelet's first
    # status (and the node lifecycle controller, not run here) would take that taint away.
    core.patch_node(name, {"spec": {"taints": taints}})
