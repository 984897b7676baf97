"""The validating webhook's decision for a PodCliqueSet AdmissionReview (product.md §3).

CREATE runs the create-time rules; UPDATE runs them on the new object and, only when they pass,
the immutability rules (Grove's short-circuit, resource-sharing.md §2.2). The checks beyond Grove
are warnings, or denials under ``strict``. Everything else is answered as controller-runtime's
``validatorForType`` answers it: DELETE and CONNECT allowed, other operations and objects Go could
not decode refused with code 400.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webhook.core import admission, dra, envelope, gojson
from webhook.core.admission import AdmissionReview
from webhook.core.claimchecks import claim_warnings
from webhook.core.envelope import Decision, ExpectedKind
from webhook.core.fielderrors import aggregate
from webhook.core.gotypes import DecodeError
from webhook.core.immutability import raw_templates, same_text, validate_update
from webhook.core.podcliqueset import PodCliqueSet
from webhook.core.validation import validate

PODCLIQUESET = ExpectedKind("grove.io", "v1alpha1", "PodCliqueSet")
PodCliqueSetReview = AdmissionReview[PodCliqueSet]
NO_CONTENT = "there is no content to decode"


@dataclass(frozen=True, slots=True)
class ValidationOptions:
    strict: bool = False
    """Deny, rather than warn about, claim names pods cannot use, collisions and unmatched filters."""


def decide(body: bytes, options: ValidationOptions) -> Decision:
    review = envelope.read(body, PodCliqueSetReview, PODCLIQUESET)
    if isinstance(review, Decision):
        return review
    request = review.request
    operation = request.operation
    if operation in ("DELETE", "CONNECT"):
        return envelope.answer(review, admission.allowed())
    if operation not in ("CREATE", "UPDATE"):
        return envelope.answer(review, admission.errored(400, f"unknown operation {gojson.quote(operation)}"))
    if request.object is None:
        return envelope.answer(review, admission.errored(400, f"{NO_CONTENT}: request.object is missing"))
    if operation == "UPDATE" and request.old_object is None:
        return envelope.answer(review, admission.errored(400, f"{NO_CONTENT}: request.oldObject is missing"))
    old = request.old_object if operation == "UPDATE" else None
    problem = _undecodable_templates(request.object, old)
    if problem:
        return envelope.answer(review, admission.errored(400, problem))

    pcs: PodCliqueSet = request.object
    messages = [str(e) for e in validate(pcs)]
    warnings = claim_warnings(pcs)
    if options.strict:
        messages += warnings
        warnings = []
    if old is not None and not messages:
        messages = [str(e) for e in validate_update(pcs, old)]
    message = aggregate(messages)
    if message is None:
        return envelope.answer(review, admission.allowed(warnings))
    return envelope.answer(review, admission.denied(message, warnings))


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
