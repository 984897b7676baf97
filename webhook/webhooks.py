"""The admission webhooks this server offers: one row each, read by the server and by ``review``.

A row names the webhook (the ``webhook`` label in metrics and logs), its HTTP path, the kind it
decides (``review`` finds the row by it) and how to build its handler from the settings and the
object store.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from webhook.core.admission import Answer, Handler, answer
from webhook.core.pcs.authorization import TemplateAuthorization
from webhook.core.pcs.scale import ScaleValidator
from webhook.core.pcs.validator import PodCliqueSetValidator
from webhook.core.pod.mutator import PodMutator
from webhook.settings import DecisionSettings, ServeSettings
from webhook.stores import AuthorizingStore, ObjectStore

Respond = Callable[[bytes], Awaitable[Answer]]
"""A webhook's answer to a request body: the server reaches the core through this module only."""

__all__ = ["WEBHOOKS", "Answer", "Respond", "Webhook"]


@dataclass(frozen=True, slots=True)
class Webhook:
    name: str
    path: str
    kind: str
    build: Callable[[DecisionSettings, ObjectStore], Handler]

    def responder(self, settings: DecisionSettings, store: ObjectStore) -> Respond:
        """The webhook's answer to a request body (a partial of ``answer``: no frame of its own)."""
        return functools.partial(answer, self.build(settings, store), self.name)


def _validator(settings: DecisionSettings, store: ObjectStore) -> PodCliqueSetValidator:
    """With the cluster store, a PodCliqueSet naming templates of other namespaces needs its user to
    be allowed to read them (DECISIONS.md §3.1), unless ``--template-authorization off``."""
    if not isinstance(store, AuthorizingStore):
        return PodCliqueSetValidator(strict=settings.strict, max_claims_per_owner=settings.max_claims_per_owner)
    mode = settings.template_authorization if isinstance(settings, ServeSettings) else "off"
    return PodCliqueSetValidator(
        strict=settings.strict,
        templates=None if mode == "off" else TemplateAuthorization(store.template_access(), warn=mode == "warn"),
        max_claims_per_owner=settings.max_claims_per_owner,
        lookup=store.template_lookup(),
    )


WEBHOOKS: tuple[Webhook, ...] = (
    Webhook("validate-podcliqueset", "/webhooks/validate-podcliqueset", "PodCliqueSet", _validator),
    Webhook("validate-scale", "/webhooks/validate-scale", "Scale", lambda settings, store: ScaleValidator(store, strict=settings.strict)),
    Webhook("mutate-pod", "/webhooks/mutate-pod", "Pod", lambda settings, store: PodMutator(store, on_missing_pcs=settings.on_missing_pcs)),
)
