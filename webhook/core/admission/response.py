"""What a webhook answers (controller-runtime's ``response.go``): every shape built here, once.

Builders follow controller-runtime's: ``allowed``, ``denied`` (code 403, reason Forbidden, a
validation's refusal), ``errored`` (a request that could not be decided, no reason) and
``patched``. A response carries its own outcome, which metrics and logs count it by, and is
written out in the AdmissionReview version it was asked in (``review_body``).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

import msgspec

REVIEW_KIND = "AdmissionReview"


class AdmissionResponse(msgspec.Struct, frozen=True, gc=False):
    """Immutable (a frozen msgspec struct, as every value made on every request)."""

    allowed: bool
    code: int
    reason: str = ""
    message: str = ""
    warnings: tuple[str, ...] = ()
    patch: bytes = b""
    note: str = ""
    """For the decision log only, never in the answer: what a patch does (the claims a pod gets)."""

    @property
    def outcome(self) -> str:
        """``patched``, ``allowed``, ``denied`` (refused for what the object says) or ``error``
        (not decided: a request that cannot be read, or a bug of ours)."""
        if self.patch:
            return "patched"
        if self.allowed:
            return "allowed"
        return "denied" if self.code == 403 else "error"

    def body(self, uid: str) -> dict[str, Any]:
        """The ``response`` member of the review."""
        status: dict[str, Any] = {"code": self.code}
        if self.reason:
            status["reason"] = self.reason
        if self.message:
            status["message"] = self.message
        result: dict[str, Any] = {"uid": uid, "allowed": self.allowed, "status": status}
        if self.patch:
            result["patchType"] = "JSONPatch"
            result["patch"] = base64.b64encode(self.patch).decode("ascii")
        if self.warnings:
            result["warnings"] = list(self.warnings)
        return result


def allowed(warnings: Iterable[str] = ()) -> AdmissionResponse:
    return AdmissionResponse(True, 200, warnings=tuple(warnings))


def denied(message: str, warnings: Iterable[str] = ()) -> AdmissionResponse:
    return AdmissionResponse(False, 403, "Forbidden", message, tuple(warnings))


def errored(code: int, message: str) -> AdmissionResponse:
    return AdmissionResponse(False, code, message=message)


def patched(patch: bytes, warnings: Iterable[str] = (), note: str = "") -> AdmissionResponse:
    return AdmissionResponse(True, 200, warnings=tuple(warnings), patch=patch, note=note)


def review_body(api_version: str, uid: str, response: AdmissionResponse) -> dict[str, Any]:
    """The response AdmissionReview, in the version the request was sent in."""
    return {"apiVersion": api_version, "kind": REVIEW_KIND, "response": response.body(uid)}
