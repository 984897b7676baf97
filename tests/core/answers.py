"""The webhooks' answers in-process, through the same seam the server uses (``admission.handling``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Literal

import orjson

from webhook.core.admission import Answer, answer
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pcs.validator import PodCliqueSetValidator
from webhook.core.pod.mutator import PodMutator


def _body(review: bytes | dict[str, Any]) -> bytes:
    return review if isinstance(review, bytes) else orjson.dumps(review)


def validated(review: bytes | dict[str, Any], strict: bool = False) -> Answer:
    """The validating webhook's answer."""
    return asyncio.run(answer(PodCliqueSetValidator(strict), "validate-podcliqueset", _body(review)))


class Source:
    """PodCliqueSets by (namespace, name), as a store holds them; counts the lookups."""

    def __init__(self, objects: Iterable[PodCliqueSet] = ()) -> None:
        self.objects = {o.key: o for o in objects}
        self.lookups: list[tuple[str, str]] = []

    def get(self, namespace: str, name: str) -> PodCliqueSet | None:
        self.lookups.append((namespace, name))
        return self.objects.get((namespace, name))

    async def fetch(self, namespace: str, name: str) -> PodCliqueSet | None:
        return None


def mutated(
    review: bytes | dict[str, Any],
    objects: Iterable[PodCliqueSet] | Source = (),
    on_missing_pcs: Literal["deny", "allow"] = "deny",
) -> Answer:
    """The pod webhook's answer, with ``objects`` in the store."""
    source = objects if isinstance(objects, Source) else Source(objects)
    return asyncio.run(answer(PodMutator(source, on_missing_pcs), "mutate-pod", _body(review)))
