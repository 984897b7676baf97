"""Writes the PodCliqueSet AdmissionReviews in ``examples/admission/pcs-*.json``.

Every example starts from the PodCliqueSet of Grove's end-to-end resource-sharing workload in
``examples/objects/`` (namespace ``default``) and changes the one thing its name says: one file per
rule of the validating webhook shows that rule's denial, the UPDATE files change a field that
resource sharing makes immutable. The tests build their objects with the same functions. Run from
the repository root::

    .venv/bin/python examples/generate_podcliquesets.py
"""

from __future__ import annotations

import copy
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import yaml

EXAMPLES = Path(__file__).resolve().parent
WORKLOAD = EXAMPLES / "objects" / "workload-resource-sharing.yaml"
PCS_KIND = {"group": "grove.io", "version": "v1alpha1", "kind": "PodCliqueSet"}
PCS_RESOURCE = {"group": "grove.io", "version": "v1alpha1", "resource": "podcliquesets"}

Object = dict[str, Any]


@functools.cache
def _workload_documents() -> tuple[Object, ...]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return tuple(d for d in yaml.load_all(WORKLOAD.read_text(), Loader=loader) if d)  # noqa: S506 - a safe loader


def workload_pcs() -> Object:
    """The PodCliqueSet ``rs-test`` as the API server holds it once applied into ``default``."""
    pcs = copy.deepcopy(next(d for d in _workload_documents() if d["kind"] == "PodCliqueSet"))
    pcs["metadata"]["namespace"] = "default"
    return pcs


def pcs_review(
    obj: Object | None,
    *,
    operation: str = "CREATE",
    old: Object | None = None,
    uid: str = "5ca1ab1e-0000-4000-8000-000000000000",
    api_version: str = "admission.k8s.io/v1",
) -> Object:
    """A PodCliqueSet AdmissionReview as the API server sends it to a validating webhook."""
    name = (obj or old or {}).get("metadata", {}).get("name", "")
    return {
        "apiVersion": api_version,
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": PCS_KIND,
            "resource": PCS_RESOURCE,
            "requestKind": PCS_KIND,
            "requestResource": PCS_RESOURCE,
            "name": name,
            "namespace": "default",
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
            "object": obj,
            "oldObject": old,
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": f"{operation.capitalize()}Options"},
        },
    }


def _template(pcs: Object) -> Object:
    template: Object = pcs["spec"]["template"]
    return template


def _group(pcs: Object) -> Object:
    group: Object = _template(pcs)["podCliqueScalingGroups"][0]
    return group


def _changed(change: Callable[[Object], None]) -> Object:
    pcs = workload_pcs()
    change(pcs)
    return pcs


# --- Create-time rules (BEHAVIOUR.md §2.5 to §2.8) ---------------------------------------


def t1_template_name_required(pcs: Object) -> None:
    """T1: the first internal template has no name."""
    _template(pcs)["resourceClaimTemplates"][0]["name"] = ""


def t2_device_requests_required(pcs: Object) -> None:
    """T2: the second internal template requests no device."""
    _template(pcs)["resourceClaimTemplates"][1]["templateSpec"]["spec"]["devices"]["requests"] = []


def t3_template_name_duplicate(pcs: Object) -> None:
    """T3: the third internal template takes the second one's name."""
    _template(pcs)["resourceClaimTemplates"][2]["name"] = "int-tpl2"


def r1_reference_name_required(pcs: Object) -> None:
    """R1: clique worker-a's first entry has no name."""
    _template(pcs)["cliques"][0]["resourceSharing"][0]["name"] = ""


def r2_reference_name_duplicate(pcs: Object) -> None:
    """R2: the scaling group's second entry repeats the first one's template."""
    _group(pcs)["resourceSharing"][1]["name"] = "int-tpl2"


def r3_namespace_with_internal_template(pcs: Object) -> None:
    """R3: the PodCliqueSet's first entry names an internal template and a namespace."""
    _template(pcs)["resourceSharing"][0]["namespace"] = "rs-shared"


def r4_scope_not_supported(pcs: Object) -> None:
    """R4: a scope the API does not have (the API server's CRD check would stop it first)."""
    _template(pcs)["resourceSharing"][1]["scope"] = "PerPod"


def f1_filter_empty(pcs: Object) -> None:
    """F1: a PodCliqueSet filter that names no child."""
    _template(pcs)["resourceSharing"][2]["filter"] = {}


def f2_filter_clique_not_found(pcs: Object) -> None:
    """F2: a PodCliqueSet filter naming a clique the spec does not have."""
    _template(pcs)["resourceSharing"][2]["filter"]["childCliqueNames"] = ["worker-c"]


def f3_filter_scaling_group_not_found(pcs: Object) -> None:
    """F3: a PodCliqueSet filter naming a scaling group the spec does not have."""
    _template(pcs)["resourceSharing"][3]["filter"]["childScalingGroupNames"] = ["sgb"]


def g1_group_filter_empty(pcs: Object) -> None:
    """G1: a scaling-group filter that names no clique."""
    _group(pcs)["resourceSharing"][2]["filter"] = {}


def g2_group_filter_clique_not_member(pcs: Object) -> None:
    """G2: a scaling-group filter naming a clique outside the group."""
    _group(pcs)["resourceSharing"][2]["filter"]["childCliqueNames"] = ["worker-a"]


def several_errors(pcs: Object) -> None:
    """Three rules at once, reported together in Grove's order."""
    f1_filter_empty(pcs)
    r4_scope_not_supported(pcs)
    t1_template_name_required(pcs)


def warnings(pcs: Object) -> None:
    """Accepted by Grove, but with claim names pods cannot use: a clique entry whose claim name is
    over 63 characters, and a PodCliqueSet PerReplica entry whose claims are worker-a's own."""
    _template(pcs)["cliques"][1]["resourceSharing"].append(
        {"name": "nvlink-partition-template-for-h100-nodes", "namespace": "rs-shared", "scope": "AllReplicas"}
    )
    _template(pcs)["resourceSharing"].append({"name": "worker-a-all-ext-ns-tpl", "scope": "PerReplica"})


# --- UPDATE rules (BEHAVIOUR.md §2.10) ----------------------------------------------------


def u1_template_changed(pcs: Object) -> None:
    """U1: an internal template asks for another device class."""
    _template(pcs)["resourceClaimTemplates"][0]["templateSpec"]["spec"]["devices"]["requests"][0]["exactly"][
        "deviceClassName"
    ] = "int-class-b"


def u2_scope_flipped(pcs: Object) -> None:
    """U2, step H of Grove's end-to-end test: int-tpl5 turns from AllReplicas to PerReplica."""
    _template(pcs)["resourceSharing"][0]["scope"] = "PerReplica"


def u3_group_entry_removed(pcs: Object) -> None:
    """U3: the scaling group drops its filtered entry."""
    del _group(pcs)["resourceSharing"][2]


def u4_clique_entries_reordered(pcs: Object) -> None:
    """U4: clique worker-a's two entries swap places (order is part of the value)."""
    entries = _template(pcs)["cliques"][0]["resourceSharing"]
    entries.reverse()


def scaled_out(pcs: Object) -> None:
    """Replicas drive the PerReplica claims and may change: two PodCliqueSet replicas."""
    pcs["spec"]["replicas"] = 2


CREATE_EXAMPLES: dict[str, Callable[[Object], None] | None] = {
    "pcs-create-valid.json": None,
    "pcs-create-t1-template-name-required.json": t1_template_name_required,
    "pcs-create-t2-device-requests-required.json": t2_device_requests_required,
    "pcs-create-t3-template-name-duplicate.json": t3_template_name_duplicate,
    "pcs-create-r1-reference-name-required.json": r1_reference_name_required,
    "pcs-create-r2-reference-name-duplicate.json": r2_reference_name_duplicate,
    "pcs-create-r3-namespace-with-internal-template.json": r3_namespace_with_internal_template,
    "pcs-create-r4-scope-not-supported.json": r4_scope_not_supported,
    "pcs-create-f1-filter-empty.json": f1_filter_empty,
    "pcs-create-f2-filter-clique-not-found.json": f2_filter_clique_not_found,
    "pcs-create-f3-filter-scaling-group-not-found.json": f3_filter_scaling_group_not_found,
    "pcs-create-g1-group-filter-empty.json": g1_group_filter_empty,
    "pcs-create-g2-group-filter-clique-not-member.json": g2_group_filter_clique_not_member,
    "pcs-create-several-errors.json": several_errors,
    "pcs-create-warnings.json": warnings,
}
UPDATE_EXAMPLES: dict[str, Callable[[Object], None]] = {
    "pcs-update-replicas-allowed.json": scaled_out,
    "pcs-update-u1-templates-immutable.json": u1_template_changed,
    "pcs-update-scope-immutable.json": u2_scope_flipped,
    "pcs-update-u3-group-sharing-immutable.json": u3_group_entry_removed,
    "pcs-update-u4-clique-sharing-immutable.json": u4_clique_entries_reordered,
}
V1BETA1_EXAMPLE = "pcs-create-valid-v1beta1.json"


def reviews() -> dict[str, Object]:
    """File name to AdmissionReview, each with a uid of its own."""
    built: dict[str, Object] = {}
    for name, change in CREATE_EXAMPLES.items():
        built[name] = pcs_review(_changed(change) if change else workload_pcs())
    for name, change in UPDATE_EXAMPLES.items():
        built[name] = pcs_review(_changed(change), operation="UPDATE", old=workload_pcs())
    built[V1BETA1_EXAMPLE] = pcs_review(workload_pcs(), api_version="admission.k8s.io/v1beta1")
    for number, review in enumerate(built.values(), start=1):
        review["request"]["uid"] = f"5ca1ab1e-0000-4000-8000-{number:012d}"
    return built


def render() -> dict[str, bytes]:
    return {name: orjson.dumps(review, option=orjson.OPT_INDENT_2) + b"\n" for name, review in reviews().items()}


def main() -> int:
    out = EXAMPLES / "admission"
    for name, content in render().items():
        (out / name).write_bytes(content)
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
