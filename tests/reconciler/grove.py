"""The Grove operator, played against the fake API server or the real one of ``tests/cluster``: the
objects Grove creates from a PodCliqueSet (BEHAVIOUR.md §3.1), with Grove's labels (§4.2, §4.3) and
owner references, so that the garbage collector removes what it would in a cluster.

Tests change replicas the way a user does (a merge patch of ``spec.replicas``) and then call
``sync`` to make the children Grove's controllers would make or delete. Only what the reconciler
reads is built: no pods, no PodGangs.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Protocol

import yaml

WORKLOAD = Path(__file__).resolve().parents[2] / "examples" / "objects" / "workload-resource-sharing.yaml"
GROVE = "grove.io/v1alpha1"
MANAGED_BY = {"app.kubernetes.io/managed-by": "grove-operator"}


def workload() -> tuple[dict[str, Any], dict[str, Any]]:
    """The end-to-end workload (§7.1): the ``ext-tpl`` template and the PodCliqueSet ``rs-test``."""
    documents = [d for d in yaml.safe_load_all(WORKLOAD.read_text()) if d]
    template = next(d for d in documents if d["kind"] == "ResourceClaimTemplate")
    pcs = next(d for d in documents if d["kind"] == "PodCliqueSet")
    return copy.deepcopy(template), copy.deepcopy(pcs)


def ext_ns_template() -> dict[str, Any]:
    """The template the end-to-end test creates in ``rs-shared`` before applying the workload."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "ext-ns-tpl", "namespace": "rs-shared"},
        "spec": {"spec": {"devices": {"requests": [{"name": "ext-ns-dev", "exactly": {"deviceClassName": "ext-ns-class"}}]}}},
    }


def owner_reference(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": GROVE,
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


class GroveApi(Protocol):
    """What the operator calls: the fake API server, or ``cluster.groveapi.ClusterApi`` on a real one."""

    def create(self, obj: dict[str, Any]) -> dict[str, Any]: ...
    def get(self, plural: str, namespace: str, name: str) -> dict[str, Any] | None: ...
    def list(self, plural: str, namespace: str, label_selector: str | None = None) -> list[dict[str, Any]]: ...
    def patch(self, plural: str, namespace: str, name: str, patch: Any) -> dict[str, Any]: ...
    def delete(self, plural: str, namespace: str, name: str) -> Any: ...


class GroveOperator:
    def __init__(self, api: GroveApi, pcs: dict[str, Any]) -> None:
        self.api = api
        self.namespace = pcs["metadata"].setdefault("namespace", "default")
        self.name = pcs["metadata"]["name"]
        self.template = pcs["spec"]["template"]
        self.pcs = api.create(pcs)

    # --- reading ---------------------------------------------------------------------------------

    def current(self, plural: str, name: str) -> dict[str, Any] | None:
        return self.api.get(plural, self.namespace, name)

    def _children(self, plural: str) -> dict[str, dict[str, Any]]:
        found = self.api.list(plural, self.namespace, label_selector=f"app.kubernetes.io/part-of={self.name}")
        return {obj["metadata"]["name"]: obj for obj in found}

    # --- what a user does ------------------------------------------------------------------------

    def scale(self, plural: str, name: str, replicas: int) -> None:
        self.api.patch(plural, self.namespace, name, {"spec": {"replicas": replicas}})
        self.sync()

    def delete(self) -> None:
        self.api.delete("podcliquesets", self.namespace, self.name)

    # --- what Grove does -------------------------------------------------------------------------

    def sync(self) -> None:
        """Create the children the PodCliqueSet's replicas need, delete the ones it no longer has."""
        pcs = self.current("podcliquesets", self.name)
        assert pcs is not None
        replicas = pcs["spec"]["replicas"]
        groups = self.template.get("podCliqueScalingGroups", [])
        members = {c for g in groups for c in g["cliqueNames"]}
        wanted_groups, wanted_cliques = set(), set()
        existing_groups = self._children("podcliquescalinggroups")
        existing_cliques = self._children("podcliques")
        for i in range(replicas):
            for clique in self.template["cliques"]:
                if clique["name"] not in members:
                    name = f"{self.name}-{i}-{clique['name']}"
                    wanted_cliques.add(name)
                    if name not in existing_cliques:
                        self._create_clique(pcs, name, clique, i, None, (0, 0))
            for group in groups:
                group_name = f"{self.name}-{i}-{group['name']}"
                wanted_groups.add(group_name)
                group_obj = existing_groups.get(group_name) or self._create_group(pcs, group_name, group, i)
                for j in range(group_obj["spec"]["replicas"]):
                    for clique_name in group["cliqueNames"]:
                        clique = next(c for c in self.template["cliques"] if c["name"] == clique_name)
                        name = f"{group_name}-{j}-{clique_name}"
                        wanted_cliques.add(name)
                        if name not in existing_cliques:
                            gang = (j, group.get("minAvailable", 1))
                            self._create_clique(group_obj, name, clique, i, group_name, gang)
        for name in existing_groups.keys() - wanted_groups:
            self.api.delete("podcliquescalinggroups", self.namespace, name)
        for name in existing_cliques.keys() - wanted_cliques:
            if self.current("podcliques", name) is not None:  # not collected with its scaling group
                self.api.delete("podcliques", self.namespace, name)

    def _create_group(self, pcs: dict[str, Any], name: str, group: dict[str, Any], i: int) -> dict[str, Any]:
        labels = {
            **MANAGED_BY,
            "app.kubernetes.io/part-of": self.name,
            "app.kubernetes.io/name": name,
            "app.kubernetes.io/component": "pcs-podcliquescalinggroup",
            "grove.io/podcliqueset-replica-index": str(i),
        }
        return self.api.create(
            {
                "apiVersion": GROVE,
                "kind": "PodCliqueScalingGroup",
                "metadata": {
                    "name": name,
                    "namespace": self.namespace,
                    "labels": labels,
                    "ownerReferences": [owner_reference(pcs)],
                },
                "spec": {"replicas": group.get("replicas", 1), "cliqueNames": group["cliqueNames"]},
            }
        )

    def _create_clique(
        self, owner: dict[str, Any], name: str, clique: dict[str, Any], i: int, group: str | None, gang: tuple[int, int]
    ) -> None:
        """``gang`` is (scaling-group replica j, the group's minAvailable): replicas from
        minAvailable on are in a PodGang of their own (§3.1)."""
        j, min_available = gang
        labels = {**clique.get("labels", {}), **MANAGED_BY, "app.kubernetes.io/part-of": self.name}
        labels |= {"app.kubernetes.io/name": name, "grove.io/podcliqueset-replica-index": str(i)}
        if group is None:
            labels |= {"app.kubernetes.io/component": "pcs-podclique", "grove.io/podgang": f"{self.name}-{i}"}
        else:
            labels |= {
                "app.kubernetes.io/component": "pcsg-podclique",
                "grove.io/podcliquescalinggroup": group,
                "grove.io/podcliquescalinggroup-replica-index": str(j),
                "grove.io/podgang": f"{self.name}-{i}" if j < min_available else f"{group}-{j - min_available}",
            }
            if j >= min_available:
                labels["grove.io/base-podgang"] = f"{self.name}-{i}"
        labels["grove.io/pod-template-hash"] = "6b7f9c8d5"
        self.api.create(
            {
                "apiVersion": GROVE,
                "kind": "PodClique",
                "metadata": {
                    "name": name,
                    "namespace": self.namespace,
                    "labels": labels,
                    "ownerReferences": [owner_reference(owner)],
                },
                "spec": {
                    key: clique["spec"][key] for key in ("replicas", "roleName", "podSpec") if key in clique["spec"]
                },
            }
        )
