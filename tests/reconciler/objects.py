"""Small objects for focused tests: a PodCliqueSet with only PodCliqueSet-level sharing, claims as
someone else might have left them, and reading Events back through core v1."""

from __future__ import annotations

from typing import Any

from kubernetes import client

GPU_SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
OTHER_SPEC = {"devices": {"requests": [{"name": "handmade", "exactly": {"deviceClassName": "other.example.com"}}]}}


def podcliqueset(
    name: str,
    sharing: list[dict[str, Any]],
    replicas: int = 1,
    namespace: str = "default",
    templates: tuple[str, ...] = ("gpu",),
) -> dict[str, Any]:
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "template": {
                "resourceClaimTemplates": [{"name": t, "templateSpec": {"spec": GPU_SPEC}} for t in templates],
                "resourceSharing": sharing,
                "cliques": [],
            },
        },
    }


def claim(
    name: str, labels: dict[str, str] | None = None, owners: list[dict[str, Any]] | None = None, namespace: str = "default"
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owners:
        metadata["ownerReferences"] = owners
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": metadata, "spec": OTHER_SPEC}


def grove_labels(pcs: str, **extra: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/managed-by": "grove-operator",
        "app.kubernetes.io/part-of": pcs,
        "app.kubernetes.io/component": "resource-claim",
        **extra,
    }


def controller(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def events(api: client.ApiClient, reason: str, namespace: str = "default") -> list[tuple[str, str, str, int]]:
    """(kind/name regarded, type, message, count) of the Events with ``reason``, read the way they
    were written: through core v1."""
    found = client.CoreV1Api(api).list_namespaced_event(namespace, field_selector=f"reason={reason}")
    return sorted(
        (f"{e.involved_object.kind}/{e.involved_object.name}", e.type, e.message, e.count or 0) for e in found.items
    )
