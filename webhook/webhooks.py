"""The admission webhooks this server offers: one row each, read by the server and by ``review``.

A row names the webhook (the ``webhook`` label in metrics), its HTTP path, the kind it decides
(``review`` dispatches on ``request.kind.kind``) and how to build its decision function from the
settings and the object store. The decision function takes the raw request body and returns the
``Decision``; it is async because a webhook may have to ``fetch`` from the store on a miss.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from webhook.core import admission, pcs_admission, pod_admission
from webhook.core.envelope import DEFAULT_API_VERSION, Decision
from webhook.settings import DecisionSettings
from webhook.stores.base import ObjectStore

Decide = Callable[[bytes], Awaitable[Decision]]


@dataclass(frozen=True, slots=True)
class Webhook:
    name: str
    path: str
    kind: str
    build: Callable[[DecisionSettings, ObjectStore], Decide]


def _validate_podcliqueset(settings: DecisionSettings, store: ObjectStore) -> Decide:
    options = pcs_admission.ValidationOptions(strict=settings.strict)

    async def decide(body: bytes) -> Decision:
        return pcs_admission.decide(body, options)

    return decide


def _mutate_pod(settings: DecisionSettings, store: ObjectStore) -> Decide:
    """Read the review, find its PodCliqueSet in memory (one bounded fetch on a miss), decide."""
    options = pod_admission.MutationOptions(on_missing_pcs=settings.on_missing_pcs)

    async def decide(body: bytes) -> Decision:
        review = pod_admission.read(body)
        if isinstance(review, Decision):
            return review
        key = pod_admission.pcs_key(review)
        pcs = None
        if key is not None:
            pcs = store.get(*key) or await store.fetch(*key)
        return pod_admission.decide(review, pcs, options)

    return decide


WEBHOOKS: tuple[Webhook, ...] = (
    Webhook("validate-podcliqueset", "/webhooks/validate-podcliqueset", "PodCliqueSet", _validate_podcliqueset),
    Webhook("mutate-pod", "/webhooks/mutate-pod", "Pod", _mutate_pod),
)


def internal_error(webhook: str, body: bytes) -> Decision:
    """The answer to a review whose decision raised, a bug of ours and not the caller's: not
    allowed, code 500, echoing what the body says of its request. The server logs the traceback;
    ``review`` reports the exception in one line."""
    api_version, uid, operation = _identity(body)
    response = admission.errored(500, f"internal error in the {webhook} webhook; the server log has the details")
    return Decision(200, admission.review(api_version, uid, response), operation, "error")


def _identity(body: bytes) -> tuple[str, str, str]:
    """The AdmissionReview version, request uid and operation, as far as the body says them."""
    try:
        data: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    review = data if isinstance(data, dict) else {}
    request = review.get("request")
    if not isinstance(request, dict):
        request = {}
    api_version = review.get("apiVersion")
    if api_version not in admission.SUPPORTED_API_VERSIONS:
        api_version = DEFAULT_API_VERSION
    return api_version, _text(request, "uid"), _text(request, "operation")


def _text(mapping: dict[str, Any], key: str) -> str:
    value = mapping.get(key)
    return value if isinstance(value, str) else ""
