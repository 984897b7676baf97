"""The claims as the API server holds them, and as BEHAVIOUR.md §4.5, §4.6 and §6 say they
must be, in one comparable shape: name -> (labels, controller owner, spec)."""

from __future__ import annotations

from typing import Any

from fakeapi import FakeApiServer

from reconciler.grove import workload, ext_ns_template

BASE_SELECTOR = "app.kubernetes.io/managed-by=grove-operator,app.kubernetes.io/component=resource-claim"
KIND_PLURAL = {"PodCliqueSet": "podcliquesets", "PodCliqueScalingGroup": "podcliquescalinggroups", "PodClique": "podcliques"}

Claim = tuple[dict[str, str], dict[str, Any], dict[str, Any]]


def template_specs() -> dict[str, dict[str, Any]]:
    """Template name -> the spec a claim from it carries (internal ``templateSpec.spec``, external
    ``spec.spec``)."""
    ext_tpl, pcs = workload()
    specs = {t["name"]: t["templateSpec"]["spec"] for t in pcs["spec"]["template"]["resourceClaimTemplates"]}
    specs["ext-tpl"] = ext_tpl["spec"]["spec"]
    specs["ext-ns-tpl"] = ext_ns_template()["spec"]["spec"]
    return specs


SPECS = template_specs()


def actual(api: FakeApiServer, namespace: str = "default", part_of: str | None = None) -> dict[str, Claim]:
    selector = BASE_SELECTOR + (f",app.kubernetes.io/part-of={part_of}" if part_of else "")
    return {
        c["metadata"]["name"]: (c["metadata"].get("labels", {}), c["metadata"].get("ownerReferences"), c["spec"])
        for c in api.list("resourceclaims", namespace, label_selector=selector)
    }


class Expect:
    """Builds expected claims of one PodCliqueSet, with owner UIDs read from the server."""

    def __init__(self, api: FakeApiServer, pcs: str, namespace: str = "default",
                 specs: dict[str, dict[str, Any]] = SPECS) -> None:
        """``specs``: each template's spec as its claims carry it (on a real API server, with its
        defaults applied)."""
        self.api, self.pcs, self.namespace, self.specs = api, pcs, namespace, specs

    def _base(self) -> dict[str, str]:
        return {
            "app.kubernetes.io/managed-by": "grove-operator",
            "app.kubernetes.io/part-of": self.pcs,
            "app.kubernetes.io/component": "resource-claim",
        }

    def _owner(self, kind: str, name: str) -> list[dict[str, Any]]:
        obj = self.api.get(KIND_PLURAL[kind], self.namespace, name)
        uid = obj["metadata"]["uid"] if obj else "<no such object>"
        return [
            {"apiVersion": "grove.io/v1alpha1", "kind": kind, "name": name, "uid": uid, "controller": True, "blockOwnerDeletion": True}
        ]

    def pcs_claim(self, template: str, replica: int | None = None) -> Claim:
        labels = self._base()
        if replica is not None:
            labels["grove.io/podcliqueset-replica-index"] = str(replica)
        return labels, self._owner("PodCliqueSet", self.pcs), self.specs[template]

    def group_claim(self, group: str, template: str, replica: int | None = None) -> Claim:
        labels = self._base() | {"grove.io/podcliquescalinggroup": group}
        if replica is not None:
            labels["grove.io/podcliquescalinggroup-replica-index"] = str(replica)
        return labels, self._owner("PodCliqueScalingGroup", group), self.specs[template]

    def clique_claim(self, clique: str, template: str, replica: int | None = None) -> Claim:
        labels = self._base() | {"grove.io/podclique": clique}
        if replica is not None:
            labels["grove.io/podclique-pod-index"] = str(replica)
        return labels, self._owner("PodClique", clique), self.specs[template]
