"""The admission webhooks this server offers: one row each, read by the server and by ``review``.

A row names the webhook (the ``webhook`` label in metrics and logs), its HTTP path, and how to
build its handler from the settings and the object store. ``review`` finds the row by the kind the
handler decides (``request.kind.kind``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from webhook.core.admission.handling import Answer, Handler, answer
from webhook.core.pcs.handler import PodCliqueSetValidator
from webhook.core.pod.handler import PodMutator
from webhook.settings import DecisionSettings
from webhook.stores.base import ObjectStore

Respond = Callable[[bytes], Awaitable[Answer]]
"""A webhook's answer to a request body."""


@dataclass(frozen=True, slots=True)
class Webhook:
    name: str
    path: str
    kind: str
    build: Callable[[DecisionSettings, ObjectStore], Handler]

    def responder(self, settings: DecisionSettings, store: ObjectStore) -> Respond:
        handler = self.build(settings, store)

        async def respond(body: bytes) -> Answer:
            return await answer(handler, self.name, body)

        return respond


WEBHOOKS: tuple[Webhook, ...] = (
    Webhook(
        "validate-podcliqueset",
        "/webhooks/validate-podcliqueset",
        "PodCliqueSet",
        lambda settings, _store: PodCliqueSetValidator(strict=settings.strict),
    ),
    Webhook(
        "mutate-pod",
        "/webhooks/mutate-pod",
        "Pod",
        lambda settings, store: PodMutator(store, on_missing_pcs=settings.on_missing_pcs),
    ),
)
