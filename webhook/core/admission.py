"""AdmissionReview ``admission.k8s.io/v1`` and ``v1beta1``: the request model and response builders.

The request model is generic over the object type, so one validation pass reads the envelope and
the object as the endpoint's kind; responses are plain mappings (serialised once, by the shell).
Builders follow controller-runtime's shapes: ``allowed``, ``denied``, ``errored``, ``patched``.
"""

from __future__ import annotations

import base64
from typing import Any, Generic, TypeVar

from pydantic import Field

from webhook.core.meta import GoStr, KubeModel

ObjectT = TypeVar("ObjectT")

ADMISSION_GROUP = "admission.k8s.io"
SUPPORTED_API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
REVIEW_KIND = "AdmissionReview"


class GroupVersionKind(KubeModel):
    group: GoStr = ""
    version: GoStr = ""
    kind: GoStr = ""

    def __str__(self) -> str:
        """Rendered as apimachinery's ``GroupVersionKind.String()``: ``group/version, Kind=kind``."""
        group_version = f"{self.group}/{self.version}" if self.group else self.version
        return f"{group_version}, Kind={self.kind}"


class AdmissionRequest(KubeModel, Generic[ObjectT]):
    uid: str
    kind: GroupVersionKind = Field(default_factory=GroupVersionKind)
    name: GoStr = ""
    namespace: GoStr = ""
    operation: GoStr = ""
    dry_run: bool | None = Field(None, alias="dryRun")
    object: ObjectT | None = None
    old_object: ObjectT | None = Field(None, alias="oldObject")


class AdmissionReview(KubeModel, Generic[ObjectT]):
    api_version: GoStr = Field("", alias="apiVersion")
    kind: GoStr = ""
    request: AdmissionRequest[ObjectT]


class Envelope(KubeModel):
    """Just the parts every response echoes: read again when the object itself cannot be decoded."""

    api_version: GoStr = Field("", alias="apiVersion")
    kind: GoStr = ""
    request: AdmissionRequest[Any]


Response = dict[str, Any]


def allowed(warnings: list[str] | None = None) -> Response:
    response: Response = {"allowed": True, "status": {"code": 200}}
    if warnings:
        response["warnings"] = warnings
    return response


def denied(message: str, warnings: list[str] | None = None) -> Response:
    """A validation denial: code 403, reason Forbidden, as controller-runtime's ``Denied``."""
    response: Response = {
        "allowed": False,
        "status": {"code": 403, "reason": "Forbidden", "message": message},
    }
    if warnings:
        response["warnings"] = warnings
    return response


def errored(code: int, message: str) -> Response:
    """A request the handler could not decide (controller-runtime's ``Errored``): no reason."""
    return {"allowed": False, "status": {"code": code, "message": message}}


def patched(patch: bytes, warnings: list[str] | None = None) -> Response:
    response: Response = {
        "allowed": True,
        "status": {"code": 200},
        "patchType": "JSONPatch",
        "patch": base64.b64encode(patch).decode("ascii"),
    }
    if warnings:
        response["warnings"] = warnings
    return response


def review(api_version: str, uid: str, response: Response) -> dict[str, Any]:
    """The response AdmissionReview, in the version the request was sent in."""
    return {
        "apiVersion": api_version,
        "kind": REVIEW_KIND,
        "response": {"uid": uid, **response},
    }
