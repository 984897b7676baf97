"""The validating webhook for PodCliqueSets (DECISIONS.md §3), as controller-runtime's validator.

CREATE runs the create-time rules; UPDATE runs them on the new object and, only when they pass,
the immutability rules (Grove's short-circuit, BEHAVIOUR.md §2.2). The checks beyond Grove are
warnings, or denials under ``strict``. Everything else is answered as controller-runtime's
``validatorForType`` answers it: DELETE and CONNECT allowed, other operations and objects Go could
not decode refused with code 400.
"""

from __future__ import annotations

from typing import Any

from webhook.core.admission import response
from webhook.core.admission.request import (
    NO_CONTENT,
    AdmissionRequest,
    ExpectedKind,
    read_objects,
)
from webhook.core.admission.response import AdmissionResponse
from webhook.core.gocompat import dra, gojson
from webhook.core.gocompat.fielderrors import aggregate
from webhook.core.gocompat.gotypes import DecodeError
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.projection import project
from webhook.core.pcs.authorization import TemplateAuthorization
from webhook.core.pcs.immutability import raw_templates, same_text, validate_update
from webhook.core.pcs.rules import validate_create
from webhook.core.pcs.warnings import claim_warnings

PODCLIQUESET = ExpectedKind("grove.io", "v1alpha1", "PodCliqueSet")


class PodCliqueSetValidator:
    kind = PODCLIQUESET

    def __init__(self, strict: bool = False, templates: TemplateAuthorization | None = None) -> None:
        self.strict = strict
        """Deny, rather than warn about, claim names pods cannot use, collisions and unmatched filters."""
        self.templates = templates
        """Asks whether the user may read the templates of other namespaces a CREATE names (DECISIONS.md §3.1)."""

    async def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        objects = read_objects(request, PodCliqueSet, PODCLIQUESET)
        if isinstance(objects, AdmissionResponse):
            return objects
        new, old = objects
        operation = request.operation
        if operation in ("DELETE", "CONNECT"):
            return response.allowed()
        if operation not in ("CREATE", "UPDATE"):
            return response.errored(400, f"unknown operation {gojson.quote(operation)}")
        if new is None:
            return response.errored(400, f"{NO_CONTENT}: request.object is missing")
        if operation == "CREATE":
            decided = self.validate(new, None)
            if self.templates is None:
                return decided
            return await self.templates.review(decided, new, request.user_info, request.namespace)
        if old is None:
            return response.errored(400, f"{NO_CONTENT}: request.oldObject is missing")
        return self.validate(new, old)

    def validate(self, pcs: PodCliqueSet, old: PodCliqueSet | None) -> AdmissionResponse:
        """A CREATE (``old`` None) or an UPDATE from ``old``."""
        problem = _undecodable_templates(pcs, old)
        if problem:
            return response.errored(400, problem)
        messages = [str(e) for e in validate_create(pcs)]
        warnings = claim_warnings(project(pcs))
        if self.strict:
            messages += warnings
            warnings = []
        if old is not None and not messages:
            messages = [str(e) for e in validate_update(pcs, old)]
        message = aggregate(messages)
        if message is None:
            return response.allowed(warnings)
        return response.denied(message, warnings)


def _undecodable_templates(new: PodCliqueSet, old: PodCliqueSet | None) -> str | None:
    """The request model keeps ``templateSpec`` raw; Go decodes it into typed structs and refuses
    the whole object when a value has the wrong JSON type, so that is checked here. An old object
    whose templates were sent as the new ones needs no second look; the new ones are decoded first,
    and templates nested too deep to compare as text are decoded rather than compared."""
    new_raw = raw_templates(new.spec.template)
    problem = _undecodable("object", new_raw)
    if problem is None and old is not None and not same_text(old_raw := raw_templates(old.spec.template), new_raw):
        problem = _undecodable("oldObject", old_raw)
    return problem


def _undecodable(field: str, templates: list[tuple[str, dict[str, Any]]] | None) -> str | None:
    try:
        dra.decode_templates(templates)
    except DecodeError as err:
        return f"cannot decode request.{field} as {PODCLIQUESET}: {err.at(dra.PATH)}"
    return None
