"""The validating webhook's decision for a PodCliqueSet AdmissionReview (product.md §3).

CREATE runs the create-time rules; UPDATE runs them on the new object and, only when they pass,
the immutability rules (Grove's short-circuit, resource-sharing.md §2.2). The checks beyond Grove
are warnings, or denials under ``strict``.
"""

from __future__ import annotations

from dataclasses import dataclass

from webhook.core import admission, envelope
from webhook.core.admission import AdmissionReview
from webhook.core.claimchecks import claim_warnings
from webhook.core.envelope import Decision, ExpectedKind
from webhook.core.fielderrors import aggregate
from webhook.core.immutability import validate_update
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
        return envelope.answer(review, admission.errored(400, f'unknown operation "{operation}"'))
    if request.object is None:
        return envelope.answer(review, admission.errored(400, f"{NO_CONTENT}: request.object is missing"))
    if operation == "UPDATE" and request.old_object is None:
        return envelope.answer(review, admission.errored(400, f"{NO_CONTENT}: request.oldObject is missing"))

    pcs: PodCliqueSet = request.object
    messages = [str(e) for e in validate(pcs)]
    warnings = claim_warnings(pcs)
    if options.strict:
        messages += warnings
        warnings = []
    if operation == "UPDATE" and not messages:
        messages = [str(e) for e in validate_update(pcs, request.old_object)]
    message = aggregate(messages)
    if message is None:
        return envelope.answer(review, admission.allowed(warnings))
    return envelope.answer(review, admission.denied(message, warnings))
