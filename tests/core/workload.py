"""Grove's end-to-end resource-sharing workload (resource-sharing.md §7) and the pods Grove builds
from it, labelled as Grove labels them (§4.3, §4.4), for tests of claim injection."""

from __future__ import annotations

import copy
import uuid
from pathlib import Path
from typing import Any

import yaml

from webhook.core.podcliqueset import PodCliqueSet

WORKLOAD = Path(__file__).resolve().parents[2] / "examples" / "objects" / "workload-resource-sharing.yaml"


def workload_pcs_raw(replicas: int = 1, namespace: str = "default") -> dict[str, Any]:
    """The PodCliqueSet ``rs-test`` as applied into ``namespace``, with ``spec.replicas`` set."""
    documents = [d for d in yaml.safe_load_all(WORKLOAD.read_text()) if d]
    pcs = copy.deepcopy(next(d for d in documents if d["kind"] == "PodCliqueSet"))
    pcs["metadata"]["namespace"] = namespace
    pcs["spec"]["replicas"] = replicas
    return pcs


def workload_pcs(replicas: int = 1, namespace: str = "default") -> PodCliqueSet:
    return PodCliqueSet.model_validate(workload_pcs_raw(replicas, namespace))


def grove_pod(
    pcs: dict[str, Any],
    pcs_replica: int,
    clique: str,
    pod_index: int,
    group: str | None = None,
    group_replica: int = 0,
) -> dict[str, Any]:
    """The pod Grove creates for pod index ``pod_index`` of a clique, before any injection: the
    clique template's pod spec, Grove's labels, generateName, hostname and subdomain."""
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
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": f"{fqn}-",
            "namespace": pcs["metadata"]["namespace"],
            "labels": pod_labels,
            "ownerReferences": [
                {"apiVersion": "grove.io/v1alpha1", "kind": "PodClique", "name": fqn, "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, fqn)),
                 "controller": True, "blockOwnerDeletion": True}
            ],
        },
        "spec": spec,
    }


def pod_review(pod: dict[str, Any], operation: str = "CREATE", uid: str = "7f0b2c4e-0001") -> dict[str, Any]:
    """A Pod AdmissionReview as the API server sends it to a mutating webhook."""
    namespace = pod.get("metadata", {}).get("namespace", "")
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
            "namespace": namespace,
            "operation": operation,
            "userInfo": {"username": "system:serviceaccount:grove-system:grove-operator"},
            "object": pod if operation != "DELETE" else None,
            "oldObject": pod if operation in ("UPDATE", "DELETE") else None,
            "dryRun": False,
        },
    }
