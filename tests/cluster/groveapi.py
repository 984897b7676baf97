"""The calls the tests' Grove operator and claim expectations make of the fake API server
(``reconciler.grove``, ``reconciler.expected``), on the real API server, so the scenarios played
against the fake are played, unchanged, against the real control plane."""

from __future__ import annotations

from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

Obj = dict[str, Any]

GROVE = ("grove.io", "v1alpha1")
RESOURCE = ("resource.k8s.io", "v1")
PLURALS = {
    "podcliquesets": GROVE,
    "podcliquescalinggroups": GROVE,
    "podcliques": GROVE,
    "resourceclaims": RESOURCE,
    "resourceclaimtemplates": RESOURCE,
}
KINDS = {
    "PodCliqueSet": "podcliquesets",
    "PodCliqueScalingGroup": "podcliquescalinggroups",
    "PodClique": "podcliques",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
}


class ClusterApi:
    def __init__(self, api: client.ApiClient) -> None:
        self.custom = client.CustomObjectsApi(api)

    def create(self, obj: Obj, namespace: str | None = None) -> Obj:
        plural = KINDS[obj["kind"]]
        namespace = namespace or obj["metadata"]["namespace"]
        created: Obj = self.custom.create_namespaced_custom_object(*PLURALS[plural], namespace, plural, obj)
        return created

    def get(self, plural: str, namespace: str, name: str) -> Obj | None:
        try:
            found: Obj = self.custom.get_namespaced_custom_object(*PLURALS[plural], namespace, plural, name)
        except ApiException as err:
            if err.status == 404:
                return None
            raise
        return found

    def list(self, plural: str, namespace: str, label_selector: str | None = None) -> list[Obj]:
        found = self.custom.list_namespaced_custom_object(*PLURALS[plural], namespace, plural, label_selector=label_selector)
        return list(found["items"])

    def patch(self, plural: str, namespace: str, name: str, patch: Any) -> Obj:
        patched: Obj = self.custom.patch_namespaced_custom_object(*PLURALS[plural], namespace, plural, name, patch)
        return patched

    def replace(self, obj: Obj) -> Obj:
        plural = KINDS[obj["kind"]]
        metadata = obj["metadata"]
        replaced: Obj = self.custom.replace_namespaced_custom_object(*PLURALS[plural], metadata["namespace"], plural, metadata["name"], obj)
        return replaced

    def delete_collection(self, plural: str, namespace: str, label_selector: str) -> list[str]:
        """One DeleteCollection; the names of the objects it matched a moment before."""
        names = [o["metadata"]["name"] for o in self.list(plural, namespace, label_selector)]
        self.custom.delete_collection_namespaced_custom_object(*PLURALS[plural], namespace, plural, label_selector=label_selector)
        return names

    def delete(self, plural: str, namespace: str, name: str, propagation_policy: str = "Background") -> None:
        try:
            self.custom.delete_namespaced_custom_object(*PLURALS[plural], namespace, plural, name,
                                                        propagation_policy=propagation_policy)
        except ApiException as err:
            if err.status != 404:
                raise
