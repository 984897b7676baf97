"""AdmissionReview bodies around Grove's end-to-end workload, as the API server would send them."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import yaml

WORKLOAD = Path(__file__).resolve().parents[2] / "examples" / "objects" / "workload-resource-sharing.yaml"
PCS_KIND = {"group": "grove.io", "version": "v1alpha1", "kind": "PodCliqueSet"}
VALIDATE = "/webhooks/validate-podcliqueset"
BAD_SCOPE_MESSAGE = (
    'spec.template.resourceSharing[0].scope: Unsupported value: "Bogus": supported values: "AllReplicas", "PerReplica"'
)


def workload_pcs() -> dict[str, Any]:
    documents = [d for d in yaml.safe_load_all(WORKLOAD.read_text()) if d]
    pcs = copy.deepcopy(next(d for d in documents if d["kind"] == "PodCliqueSet"))
    pcs["metadata"]["namespace"] = "default"
    return pcs


def bad_scope_pcs() -> dict[str, Any]:
    pcs = workload_pcs()
    pcs["spec"]["template"]["resourceSharing"][0]["scope"] = "Bogus"
    return pcs


def review(
    obj: Any = None,
    *,
    operation: str = "CREATE",
    old: Any = None,
    uid: str = "705ab4f5-6393-11e8-b7cc-42010a800002",
    api_version: str = "admission.k8s.io/v1",
    kind: dict[str, str] | None = None,
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "uid": uid,
        "kind": kind or PCS_KIND,
        "resource": {"group": "grove.io", "version": "v1alpha1", "resource": "podcliquesets"},
        "name": "rs-test",
        "namespace": "default",
        "operation": operation,
        "userInfo": {"username": "admin"},
    }
    if obj is not None:
        request["object"] = obj
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": api_version, "kind": "AdmissionReview", "request": request}


def body(data: Any) -> bytes:
    return orjson.dumps(data)
