"""What the webhooks need from an object store: PodCliqueSets by namespace and name.

The request path calls ``get``, which answers from memory, and at most one ``fetch`` on a miss, so
a webhook call never waits on more than one bounded API request. A store keeps each PodCliqueSet
without its templates: the few hundred bytes of it the pod webhook reads, never the whole object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pcs.authorization import TemplateAccess
from webhook.core.pcs.authorization import TemplateLookup


class StoreError(Exception):
    """A store that cannot start (an unparsable manifest, no cluster access); one line."""


@runtime_checkable
class ObjectStore(Protocol):
    @property
    def ready(self) -> bool:
        """True once the store holds everything it should."""

    @property
    def size(self) -> int:
        """PodCliqueSets held."""

    def get(self, namespace: str, name: str) -> PodCliqueSet | None:
        """From memory: O(1), never blocks."""

    async def fetch(self, namespace: str, name: str) -> PodCliqueSet | None:
        """After a ``get`` miss: at most one bounded read from the source."""

    async def start(self) -> None:
        """Raises ``StoreError`` when the store cannot serve; a cluster store returns once its
        watch is running, and ``ready`` tells when it has synced."""

    async def stop(self) -> None:
        """Stops background work; idempotent."""


@runtime_checkable
class AuthorizingStore(Protocol):
    """A store connected to an API server, which also answers there whether a template exists and
    who may read it (once started; stopped with the store)."""

    def template_access(self) -> TemplateAccess:
        """Whether a user may get a ResourceClaimTemplate."""

    def template_lookup(self) -> TemplateLookup:
        """Whether a ResourceClaimTemplate exists."""

    def template_reviews(self) -> Mapping[str, int]:
        """The SubjectAccessReviews made so far, by result."""
