"""The point of the whole feature, on the real kube-scheduler: pods that share a claim get the same
device. Two Nodes (objects the test makes Ready; no kubelet runs) each publish a ResourceSlice as a
DRA driver would; Grove's pods, created through the API server and given their claims by the
webhook, whose claims the reconciler made, are allocated and bound by the scheduler.

- Every pod sharing an ``AllReplicas`` claim is on the node of the device that claim got, and the
  claim is reserved for all of them; ``PerReplica`` claims of different replicas get different
  devices.
- A device that allows several allocations and declares capacity (KEP-5075) is shared by claims
  requesting part of it while its capacity lasts; the next claim, and its pod, wait.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from cluster import kube
from cluster.controlplane import ControlPlane
from cluster.groveapi import ClusterApi
from cluster.nodes import create_ready
from cluster.pods import create, grove_pods
from cluster.processes import Command
from cluster.workloads import INITIAL, end_to_end, wait_for_claims
from reconciler.e2e import PCS
from reconciler.grove import GroveOperator

Obj = dict[str, Any]
NODES = ("node-a", "node-b")
DRIVER, SHARED_DRIVER = "gpu.example.com", "shared.example.com"
CLASSES = ("ext-class", "ext-ns-class", *(f"int-class{n}" for n in ("", 2, 3, 4, 5, 6, 7, 8)))
"""Every device class the end-to-end workload's templates name."""
DEVICES_PER_NODE = 16
SCHEDULED = 60.0


def device_class(name: str, driver: str) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


def slice_of(node_name: str, driver: str, devices: list[Obj]) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-{driver}"},
            "spec": {"driver": driver, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}


@pytest.fixture(scope="module")
def nodes(admin: client.ApiClient, control_plane: ControlPlane) -> Iterator[None]:
    """Two Ready nodes with 16 GPUs each; node-b also has one shareable device of 80Gi."""
    custom = client.CustomObjectsApi(admin)
    for name in CLASSES:
        custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", device_class(name, DRIVER))
    custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", device_class("shared-gpu", SHARED_DRIVER))
    for name in NODES:
        create_ready(admin, name)
        gpus = [{"name": f"gpu-{i}", "attributes": {"model": {"string": "h100"}}} for i in range(DEVICES_PER_NODE)]
        custom.create_cluster_custom_object("resource.k8s.io", "v1", "resourceslices", slice_of(name, DRIVER, gpus))
    shared = [{"name": "shared-0", "allowMultipleAllocations": True, "capacity": {"memory": {"value": "80Gi"}}}]
    custom.create_cluster_custom_object("resource.k8s.io", "v1", "resourceslices", slice_of("node-b", SHARED_DRIVER, shared))
    yield


def schedulable(pod: Obj) -> Obj:
    """A Grove pod for the default scheduler: the e2e test's own scheduler, node affinity and
    scheduling gate left out."""
    spec = pod["spec"]
    for field in ("schedulerName", "affinity", "tolerations", "schedulingGates"):
        spec.pop(field, None)
    return pod


def create_pods(admin: client.ApiClient, grove: GroveOperator) -> list[str]:
    """Every pod of every PodClique, as Grove's operator creates them; their names."""
    return [create(admin, schedulable(pod))["metadata"]["name"] for pod in grove_pods(grove, every_pod=True)]


def bound(admin: client.ApiClient, namespace: str, names: list[str]) -> dict[str, Obj] | None:
    pods = {p.metadata.name: p for p in client.CoreV1Api(admin).list_namespaced_pod(namespace).items if p.metadata.name in names}
    return pods if len(pods) == len(names) and all(p.spec.node_name for p in pods.values()) else None


def allocations(api: ClusterApi, namespace: str) -> dict[str, Obj]:
    return {c["metadata"]["name"]: c for c in api.list("resourceclaims", namespace)}


def test_pods_sharing_a_claim_are_placed_on_the_device_it_got(
    admin: client.ApiClient, reconciling: Command, nodes: None
) -> None:
    namespace = "rs-schedule"
    grove = end_to_end(admin, namespace)
    api = ClusterApi(admin)
    wait_for_claims(api, namespace, INITIAL)
    names = create_pods(admin, grove)
    pods = kube.wait_for(lambda: bound(admin, namespace, names), "every pod bound", SCHEDULED)

    claims = allocations(api, namespace)
    users: dict[str, list[Any]] = defaultdict(list)
    for pod in pods.values():
        for reference in pod.spec.resource_claims or []:
            users[reference.resource_claim_name].append(pod)
    assert set(users) == set(claims), "every claim is used by some pod"
    devices = {}
    for name, claim in claims.items():
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        devices[name] = (result["pool"], result["device"])
        assert {p.spec.node_name for p in users[name]} == {result["pool"]}, f"the pods of {name} are on its device's node"
        assert {r["uid"] for r in claim["status"]["reservedFor"]} == {p.metadata.uid for p in users[name]}
    assert len(set(devices.values())) == len(devices), "no two claims got the same device"
    everyone = users[f"{PCS}-all-int-tpl5"]
    assert len(everyone) == len(pods), "the PodCliqueSet's AllReplicas claim is every pod's"
    per_replica = [devices[f"{PCS}-0-sga-{j}-int-tpl3"] for j in (0, 1)]
    assert per_replica[0] != per_replica[1]


def test_a_device_with_capacity_is_shared_while_it_lasts(
    admin: client.ApiClient, reconciling: Command, nodes: None
) -> None:
    namespace = "rs-capacity"
    kube.create_namespace(admin, namespace)
    pcs = {
        "apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet", "metadata": {"name": "cap", "namespace": namespace},
        "spec": {"replicas": 3, "template": {
            "resourceClaimTemplates": [{"name": "slice", "templateSpec": {"spec": {"devices": {"requests": [
                {"name": "mem", "exactly": {"deviceClassName": "shared-gpu", "capacity": {"requests": {"memory": "30Gi"}}}}]}}}}],
            "resourceSharing": [{"name": "slice", "scope": "PerReplica"}],
            "cliques": [{"name": "w", "spec": {"roleName": "w", "replicas": 1, "podSpec": {
                "containers": [{"name": "w", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}}]}}}],
        }},
    }
    grove = GroveOperator(ClusterApi(admin), pcs)
    grove.sync()
    api = ClusterApi(admin)
    kube.wait_for(lambda: len(api.list("resourceclaims", namespace)) == 3, "three claims")
    names = create_pods(admin, grove)
    core = client.CoreV1Api(admin)

    def placed() -> tuple[list[Any], list[Any]] | None:
        pods = [p for p in core.list_namespaced_pod(namespace).items if p.metadata.name in names]
        scheduled = [p for p in pods if p.spec.node_name]
        waiting = [p for p in pods if any(c.type == "PodScheduled" and c.reason == "Unschedulable"
                                          for c in (p.status.conditions or []))]
        return (scheduled, waiting) if len(scheduled) == 2 and len(waiting) == 1 else None

    scheduled, (waiting,) = kube.wait_for(placed, "two pods placed and the third unschedulable", SCHEDULED)
    assert {p.spec.node_name for p in scheduled} == {"node-b"}
    claims = allocations(api, namespace)
    allocated = {n: c["status"]["allocation"]["devices"]["results"][0] for n, c in claims.items() if c.get("status", {}).get("allocation")}
    assert len(allocated) == 2 and {r["device"] for r in allocated.values()} == {"shared-0"}
    assert all(r["consumedCapacity"] == {"memory": "30Gi"} for r in allocated.values())
    replica = waiting.metadata.labels["grove.io/podcliqueset-replica-index"]
    assert f"cap-{replica}-slice" not in allocated
