"""A template using every field ``resource.k8s.io/v1`` has in the release (prioritized lists,
consumable capacity, tolerations, admin access, both allocation modes, CEL selectors, constraints,
opaque driver configuration and, from 1.37, derived attributes) yields claims whose spec is the
template's spec as the API server returns both: for an external ResourceClaimTemplate and for the
same spec inline in the PodCliqueSet."""

from __future__ import annotations

import copy
from typing import Any

from kubernetes import client

from cluster import kube
from cluster.controlplane import ControlPlane
from cluster.groveapi import ClusterApi
from cluster.processes import Command

NAMESPACE = "rs-fidelity"
DRIVER = "gpu.example.com"
TOLERATIONS = [
    {"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "example.com/flaky", "operator": "Equal", "value": "yes", "effect": "NoExecute", "tolerationSeconds": 60},
]
SELECTOR = [{"cel": {"expression": f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "h100"'}}]


def full_spec(derived_attributes: bool) -> dict[str, Any]:
    """A ResourceClaimSpec with every field of the release's ``resource.k8s.io/v1``."""
    exact_count: dict[str, Any] = {
        "deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": 2,
        "capacity": {"requests": {"memory": "8Gi"}},
    }
    constraints: list[dict[str, Any]] = [
        {"requests": ["exact-count", "prioritized"], "matchAttribute": f"{DRIVER}/numa"},
        {"requests": ["exact-all"], "distinctAttribute": f"{DRIVER}/pcie_root"},
    ]
    if derived_attributes:
        exact_count["derivedAttributes"] = [
            {"name": "example.com/numa_index", "expression": f'device.attributes["{DRIVER}"].numa'}
        ]
        constraints.append({"requests": ["exact-count"], "matchAttribute": "example.com/numa_index"})
    return {
        "devices": {
            "requests": [
                {"name": "exact-all", "exactly": {"deviceClassName": DRIVER, "allocationMode": "All",
                                                  "selectors": SELECTOR, "tolerations": TOLERATIONS}},
                {"name": "exact-count", "exactly": exact_count},
                {"name": "admin", "exactly": {"deviceClassName": DRIVER, "adminAccess": True}},
                {"name": "prioritized", "firstAvailable": [
                    {"name": "big", "deviceClassName": DRIVER, "selectors": SELECTOR, "allocationMode": "ExactCount",
                     "count": 1, "tolerations": TOLERATIONS[:1], "capacity": {"requests": {"memory": "40Gi"}}},
                    {"name": "small", "deviceClassName": DRIVER, "allocationMode": "All"},
                ]},
            ],
            "constraints": constraints,
            "config": [{"requests": ["exact-count"], "opaque": {"driver": DRIVER, "parameters": {
                "apiVersion": f"{DRIVER}/v1", "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing", "replicas": 4}}}}],
        }
    }


def podcliqueset(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": {"name": "fidelity", "namespace": NAMESPACE},
        "spec": {"replicas": 1, "template": {
            "resourceClaimTemplates": [{"name": "inline", "templateSpec": {"spec": spec}}],
            "resourceSharing": [{"name": "inline", "scope": "AllReplicas"}, {"name": "external", "scope": "AllReplicas"}],
            "cliques": [{"name": "worker", "spec": {"roleName": "worker", "replicas": 1, "podSpec": {
                "containers": [{"name": "worker", "image": "busybox"}]}}}],
        }},
    }


def test_claims_carry_every_field_of_their_template(
    control_plane: ControlPlane, admin: client.ApiClient, reconciling: Command
) -> None:
    api = ClusterApi(admin)
    # adminAccess is only allowed in namespaces labelled for it.
    client.CoreV1Api(admin).create_namespace({"metadata": {"name": NAMESPACE, "labels": {
        "resource.kubernetes.io/admin-access": "true"}}})
    spec = full_spec("DRADerivedAttributes" in control_plane.feature_gates)
    external = api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                           "metadata": {"name": "external", "namespace": NAMESPACE}, "spec": {"spec": copy.deepcopy(spec)}})
    assert external["spec"]["spec"]["devices"]["requests"][1]["exactly"] == spec["devices"]["requests"][1]["exactly"], (
        "a field was dropped: is its feature gate on?")
    stored = api.create(podcliqueset(spec))
    inline = stored["spec"]["template"]["resourceClaimTemplates"][0]["templateSpec"]["spec"]
    # Grove's CRD was generated from Kubernetes 1.34's types: the API server prunes a newer field
    # (derivedAttributes) from an inline template, and the claim carries what the PodCliqueSet holds.
    pruned = copy.deepcopy(spec)
    pruned["devices"]["requests"][1]["exactly"].pop("derivedAttributes", None)
    assert inline == pruned
    inline_as_claim = api.custom.create_namespaced_custom_object(
        "resource.k8s.io", "v1", NAMESPACE, "resourceclaimtemplates",
        {"metadata": {"name": "inline-defaults"}, "spec": {"spec": inline}}, dry_run="All")["spec"]["spec"]

    claims = kube.wait_for(
        lambda: {c["metadata"]["name"]: c for c in api.list("resourceclaims", NAMESPACE)}
        if len(api.list("resourceclaims", NAMESPACE)) == 2 else None, "both claims")
    assert claims["fidelity-all-external"]["spec"] == external["spec"]["spec"]
    assert claims["fidelity-all-inline"]["spec"] == inline_as_claim
