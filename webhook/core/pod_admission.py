"""The mutating webhook's decision for a Pod AdmissionReview (product.md §4).

The decision is split in two around the one thing it cannot do itself, finding the PodCliqueSet:
``read`` and ``pcs_key`` say which PodCliqueSet a review needs, the caller looks it up in its
object store, and ``decide`` turns the review and what was found into the answer. Only CREATE of
a Grove pod is mutated; every other review is answered after reading no more than the pod's labels.

Label errors and an unknown PodCliqueSet are denials (code 403, reason Forbidden), like the
validating webhook's: the pod is refused because of what it says, as Grove would refuse to build
it. Code 400 is kept for reviews whose object cannot be read at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from webhook.core import admission, envelope, labels
from webhook.core.admission import AdmissionReview
from webhook.core.envelope import Decision, ExpectedKind
from webhook.core.identity import IdentityError, clique_identity, pod_index
from webhook.core.meta import DEFAULT_NAMESPACE
from webhook.core.patch import claim_patch
from webhook.core.pod import Pod, PodHeader
from webhook.core.pcs_sharing import PodCliqueSetSharing
from webhook.core.sharing import claims_for_pod

POD = ExpectedKind("", "v1", "Pod")
PodReview = AdmissionReview[Pod] | AdmissionReview[PodHeader]
"""A review whose pod is read whole (a Grove pod being created) or only up to its metadata."""

_FULL = AdmissionReview[Pod]
_HEADER = AdmissionReview[PodHeader]
NO_CONTENT = "there is no content to decode"


@dataclass(frozen=True, slots=True)
class MutationOptions:
    on_missing_pcs: Literal["deny", "allow"] = "deny"
    """Whether a Grove pod whose PodCliqueSet cannot be found is refused or admitted unchanged."""


def is_grove_pod(pod_labels: Mapping[str, Any]) -> bool:
    return labels.PODCLIQUE in pod_labels and labels.PART_OF in pod_labels


def _mutated(request: dict[str, Any]) -> bool:
    """Whether the raw request is a CREATE of a pod with Grove's labels: only then is it read whole."""
    if request.get("operation") != "CREATE":
        return False
    obj = request.get("object")
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    pod_labels = metadata.get("labels") if isinstance(metadata, dict) else None
    return isinstance(pod_labels, dict) and is_grove_pod(pod_labels)


def read(body: bytes) -> PodReview | Decision:
    """The review, with the pod read whole only when it will be mutated, or the Decision answering
    an unusable body."""
    data = envelope.load(body)
    if isinstance(data, Decision):
        return data
    return envelope.validate(data, _FULL if _mutated(data["request"]) else _HEADER, POD)


def _namespace(review: PodReview, pod: PodHeader) -> str:
    """The API server always sends ``request.namespace`` for a pod; a review written by hand may
    leave both it and the pod's namespace out, and then means ``default``, as ``kubectl`` would."""
    return review.request.namespace or pod.metadata.namespace or DEFAULT_NAMESPACE


def pcs_key(review: PodReview) -> tuple[str, str] | None:
    """(namespace, name) of the PodCliqueSet the review needs; None when it needs none."""
    pod = review.request.object
    if review.request.operation != "CREATE" or not isinstance(pod, Pod) or not is_grove_pod(pod.metadata.labels):
        return None
    return _namespace(review, pod), pod.metadata.labels[labels.PART_OF]


def _missing_pcs(namespace: str, name: str, consequence: str) -> str:
    return f"PodCliqueSet {namespace}/{name} (label {labels.PART_OF} of the pod) not found: {consequence}"


def decide(review: PodReview, pcs: PodCliqueSetSharing | None, options: MutationOptions) -> Decision:
    """The answer to ``review``, given (what the store keeps of) the PodCliqueSet ``pcs_key`` named
    (None if not found)."""
    request = review.request
    if request.operation != "CREATE":
        return envelope.answer(review, admission.allowed())
    pod = request.object
    if pod is None:
        return envelope.answer(review, admission.errored(400, f"{NO_CONTENT}: request.object is missing"))
    if not isinstance(pod, Pod) or not is_grove_pod(pod.metadata.labels):
        return envelope.answer(review, admission.allowed())

    namespace = _namespace(review, pod)
    pod_labels = pod.metadata.labels
    pcs_name = pod_labels[labels.PART_OF]
    try:
        identity = clique_identity(namespace, pcs_name, pod_labels[labels.PODCLIQUE], pod_labels)
    except IdentityError as err:
        return envelope.answer(review, admission.denied(str(err)))
    if pcs is None:
        if options.on_missing_pcs == "allow":
            warning = _missing_pcs(namespace, pcs_name, "pod admitted without shared ResourceClaims")
            return envelope.answer(review, admission.allowed([warning]))
        reason = "the pod's shared ResourceClaims cannot be determined"
        return envelope.answer(review, admission.denied(_missing_pcs(namespace, pcs_name, reason)))

    pod_key = f"{namespace}/{pod.metadata.name or pod.metadata.generate_name}"
    try:
        claims = claims_for_pod(pcs, identity, lambda: pod_index(pod_labels, pod_key))
    except IdentityError as err:
        return envelope.answer(review, admission.denied(str(err)))
    operations = claim_patch(pod, claims)
    if not operations:
        return envelope.answer(review, admission.allowed())
    return envelope.answer(review, admission.patched(orjson.dumps(operations)))
