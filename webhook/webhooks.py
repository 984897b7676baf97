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

__all__ = ["WEBHOOKS", "Answer", "Respond", "Webhook", "template_authorization"]


@dataclass(frozen=True, slots=True)
class Webhook:
    name: str
    path: str
    kind: str
    build: Callable[[DecisionSettings, ObjectStore], Handler]

    def responder(self, settings: DecisionSettings, store: ObjectStore) -> Respond:
        """The webhook's answer to a request body (a partial of ``answer``: no frame of its own)."""
        return functools.partial(answer, self.build(settings, store), self.name)


def template_authorization(settings: DecisionSettings, store: ObjectStore) -> TemplateAuthorization | None:
    """Whether a user may read the templates of other namespaces a PodCliqueSet names (DECISIONS.md
    §3.1): with the cluster store, unless ``--template-authorization off``; else None."""
    if not isinstance(settings, ServeSettings) or settings.template_authorization == "off":
        return None
    if not isinstance(store, AuthorizingStore):
        return None
    return TemplateAuthorization(store.template_access(), warn=settings.template_authorization == "warn")


def _validator(settings: DecisionSettings, store: ObjectStore) -> PodCliqueSetValidator:
    return PodCliqueSetValidator(
        strict=settings.strict,
        templates=template_authorization(settings, store),
        max_claims_per_owner=settings.max_claims_per_owner,
        lookup=store.template_lookup() if isinstance(store, AuthorizingStore) else None,
    )


def _scale_validator(settings: DecisionSettings, store: ObjectStore) -> ScaleValidator:
    return ScaleValidator(store, strict=settings.strict)


def _mutator(settings: DecisionSettings, store: ObjectStore) -> PodMutator:
    return PodMutator(store, on_missing_pcs=settings.on_missing_pcs)


WEBHOOKS: tuple[Webhook, ...] = (
    Webhook("validate-podcliqueset", "/webhooks/validate-podcliqueset", "PodCliqueSet", _validator),
    Webhook("validate-scale", "/webhooks/validate-scale", "Scale", _scale_validator),
    Webhook("mutate-pod", "/webhooks/mutate-pod", "Pod", _mutator),
)
