"""The admission webhooks this server offers: one row each, read by the server and by ``review``.

A row names the webhook (the ``webhook`` label in metrics), its HTTP path, the kind it decides
(``review`` dispatches on ``request.kind.kind``) and how to build its decision function from the
settings and the object store. The decision function takes the raw request body and returns the
``Decision``; it is async because a webhook may have to ``fetch`` from the store on a miss.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from webhook.core import pcs_admission, pod_admission
from webhook.core.envelope import Decision
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
