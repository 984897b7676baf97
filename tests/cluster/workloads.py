"""Grove's end-to-end workload set up in a namespace of its own for one scenario: its templates, the
PodCliqueSet created through the webhooks, the children Grove's operator makes, and its claims
read back as the reconciler makes them."""

from __future__ import annotations

import copy
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cluster import kube
from cluster.groveapi import ClusterApi
from reconciler.e2e import PCS, STEPS
from reconciler.expected import template_specs
from reconciler.grove import GroveOperator, ext_ns_template, workload

Obj = dict[str, Any]
SETTLE = 30.0


def create_ignoring_conflict(api: ClusterApi, obj: Obj) -> None:
    try:
        api.create(obj)
    except ApiException as err:
        if err.status != 409:
            raise


def as_stored(api: ClusterApi, namespace: str) -> dict[str, dict[str, Any]]:
    """Each template's spec as the API server returns it: the external templates read back, the
    internal ones as a ResourceClaimTemplate of that spec would be stored (a dry run)."""
    specs = {}
    for name, spec in template_specs().items():
        template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                    "metadata": {"name": f"defaults-{name}", "namespace": namespace}, "spec": {"spec": copy.deepcopy(spec)}}
        stored = api.custom.create_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaimtemplates",
                                                            template, dry_run="All")
        specs[name] = stored["spec"]["spec"]
    return specs


def workload_in(admin: client.ApiClient, namespace: str, replicas: int = 1) -> tuple[ClusterApi, dict[str, Any]]:
    """Grove's end-to-end PodCliqueSet for ``namespace`` (not created yet), with ``replicas``
    replicas, its namespaces and external templates created."""
    api = ClusterApi(admin)
    for name in (namespace, "rs-shared"):
        kube.create_namespace(admin, name)
    create_ignoring_conflict(api, ext_ns_template())
    ext_tpl, pcs = workload()
    api.create({**ext_tpl, "metadata": {**ext_tpl["metadata"], "namespace": namespace}})
    pcs["metadata"]["namespace"] = namespace
    pcs["spec"]["replicas"] = replicas
    return api, pcs


def end_to_end(admin: client.ApiClient, namespace: str, replicas: int = 1) -> GroveOperator:
    """The workload in ``namespace`` with ``replicas`` PodCliqueSet replicas, its children made."""
    grove = GroveOperator(*workload_in(admin, namespace, replicas))
    grove.sync()
    return grove


def claims(api: ClusterApi, namespace: str) -> dict[str, Obj]:
    return {c["metadata"]["name"]: c for c in api.list("resourceclaims", namespace, f"app.kubernetes.io/part-of={PCS}")}


def wait_for_claims(api: ClusterApi, namespace: str, count: int, deadline: float = SETTLE) -> dict[str, Obj]:
    """The claims once there are ``count`` of them."""
    kube.wait_for(lambda: len(claims(api, namespace)) == count, f"{count} claims in {namespace}", deadline)
    return claims(api, namespace)


INITIAL = STEPS[0].count
"""Claims of the workload with one PodCliqueSet replica, as applied."""
