"""Grove's own claim controller (v0.1.0-alpha.8 and later), played against the fake API server or
the real one of ``tests/cluster``: what ``EnsureResourceClaims`` and ``CleanupStalePerReplicaRCs``
do for every owner (BEHAVIOUR.md §4.5 to §4.8, §6), written here from the spec and not from this
project's core, so a reconciler running beside it meets an independent writer of the same claims.

On the fake its writes go through the server's hooks, so the request log holds only the
reconciler's requests; on the real one they are the tier's administrator's, which the audit log
leaves out.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol

from reconciler.grove import GROVE, GroveApi, GroveOperator

BASE = {"app.kubernetes.io/managed-by": "grove-operator", "app.kubernetes.io/component": "resource-claim"}
LEVELS = {
    # kind: (owner label, replica-index label)
    "PodCliqueSet": (None, "grove.io/podcliqueset-replica-index"),
    "PodCliqueScalingGroup": ("grove.io/podcliquescalinggroup", "grove.io/podcliquescalinggroup-replica-index"),
    "PodClique": ("grove.io/podclique", "grove.io/podclique-pod-index"),
}

Claim = tuple[dict[str, str], list[dict[str, Any]], dict[str, Any]]
"""labels, ownerReferences, spec"""


class ClaimsApi(GroveApi, Protocol):
    """What Grove's claim controller calls beside what its operator does."""

    def replace(self, obj: dict[str, Any]) -> dict[str, Any]: ...
    def delete_collection(self, plural: str, namespace: str, label_selector: str) -> list[str]: ...


class GroveClaims:
    """The claims Grove's controllers keep for one PodCliqueSet built by ``GroveOperator``."""

    def __init__(self, api: ClaimsApi, grove: GroveOperator) -> None:
        self.api, self.grove = api, grove

    def owners(self) -> list[tuple[dict[str, Any], list[dict[str, Any]], str]]:
        """(owner object, its sharing entries, part-of) for the PodCliqueSet and its children."""
        template = self.grove.template
        pcs = self.grove.current("podcliquesets", self.grove.name)
        assert pcs is not None
        found = [(pcs, template.get("resourceSharing", []), self.grove.name)]
        groups = {g["name"]: g for g in template.get("podCliqueScalingGroups", [])}
        cliques = {c["name"]: c for c in template["cliques"]}
        selector = f"app.kubernetes.io/part-of={self.grove.name}"
        for group in self.api.list("podcliquescalinggroups", self.grove.namespace, label_selector=selector):
            i = group["metadata"]["labels"]["grove.io/podcliqueset-replica-index"]
            config = group["metadata"]["name"].removeprefix(f"{self.grove.name}-{i}-")
            found.append((group, groups[config].get("resourceSharing", []), self.grove.name))
        for clique in self.api.list("podcliques", self.grove.namespace, label_selector=selector):
            labels = clique["metadata"]["labels"]
            part_of = labels["app.kubernetes.io/part-of"]
            if "grove.io/podcliquescalinggroup" in labels:
                prefix = f"{labels['grove.io/podcliquescalinggroup']}-{labels['grove.io/podcliquescalinggroup-replica-index']}-"
            else:
                prefix = f"{part_of}-{labels['grove.io/podcliqueset-replica-index']}-"
            name = clique["metadata"]["name"].removeprefix(prefix)
            found.append((clique, cliques[name].get("resourceSharing", []), part_of))
        return found

    def desired(self) -> dict[str, Claim]:
        claims: dict[str, Claim] = {}
        for owner, entries, part_of in self.owners():
            meta, kind = owner["metadata"], owner["kind"]
            owner_label, replica_label = LEVELS[kind]
            labels = {**BASE, "app.kubernetes.io/part-of": part_of}
            if owner_label:
                labels[owner_label] = meta["name"]
            reference = [{"apiVersion": GROVE, "kind": kind, "name": meta["name"], "uid": meta["uid"],
                          "controller": True, "blockOwnerDeletion": True}]
            for entry in entries:
                if entry["scope"] == "AllReplicas":
                    claims[f"{meta['name']}-all-{entry['name']}"] = (labels, reference, self.spec(entry))
                elif entry["scope"] == "PerReplica":
                    for r in range(owner["spec"]["replicas"]):
                        indexed = {**labels, replica_label: str(r)}
                        claims[f"{meta['name']}-{r}-{entry['name']}"] = (indexed, reference, self.spec(entry))
        return claims

    def spec(self, entry: dict[str, Any]) -> dict[str, Any]:
        internal = {t["name"]: t for t in self.grove.template.get("resourceClaimTemplates", [])}
        if not entry.get("namespace") and entry["name"] in internal:
            return copy.deepcopy(internal[entry["name"]]["templateSpec"]["spec"])
        external = self.api.get("resourceclaimtemplates", entry.get("namespace") or self.grove.namespace, entry["name"])
        assert external is not None, f"template {entry} missing"
        return copy.deepcopy(external["spec"]["spec"])

    # --- what Grove's controllers do after each change -----------------------------------------

    def ensure(self) -> None:
        """``EnsureResourceClaim`` for every claim: create, or merge labels and set the controller."""
        for name, (labels, reference, spec) in self.desired().items():
            existing = self.api.get("resourceclaims", self.grove.namespace, name)
            if existing is None:
                self.api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                 "metadata": {"name": name, "namespace": self.grove.namespace,
                                              "labels": labels, "ownerReferences": reference},
                                 "spec": spec})
                continue
            updated = copy.deepcopy(existing)
            updated["metadata"]["labels"] = {**existing["metadata"].get("labels", {}), **labels}
            others = [r for r in existing["metadata"].get("ownerReferences", [])
                      if (r["kind"], r["name"]) != (reference[0]["kind"], reference[0]["name"])]
            updated["metadata"]["ownerReferences"] = others + reference
            self.api.replace(updated)  # an Update every reconcile; the server writes nothing if equal

    def clean_up(self) -> list[str]:
        """``CleanupStalePerReplicaRCs``: one DeleteCollection per owner with Grove's selector."""
        deleted: list[str] = []
        for owner, entries, part_of in self.owners():
            if not entries:
                continue
            owner_label, replica_label = LEVELS[owner["kind"]]
            terms = [f"{k}={v}" for k, v in {**BASE, "app.kubernetes.io/part-of": part_of}.items()]
            if owner_label:
                terms.append(f"{owner_label}={owner['metadata']['name']}")
            terms.append(replica_label)
            replicas = owner["spec"]["replicas"]
            if replicas > 0:
                terms.append(f"{replica_label} notin ({','.join(str(r) for r in range(replicas))})")
            deleted += self.api.delete_collection("resourceclaims", self.grove.namespace, ",".join(terms))
        return deleted

    def reconcile(self) -> None:
        self.ensure()
        self.clean_up()
