"""What the webhooks need from an object store: PodCliqueSets by namespace and name.

Two stores implement it: the embedded store (manifests loaded from files, for local runs and
``review``) and the cluster store (a list+watch cache). The request path only ever calls ``get``,
which answers from memory, and at most one ``fetch`` on a miss, so a webhook call never waits on
more than one bounded API request. Both keep each PodCliqueSet as
``model.podcliqueset.PodCliqueSet`` without its templates, the few hundred bytes of it that the pod
webhook reads, never the whole object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pcs.authorization import TemplateAccess
from webhook.core.pcs.authorization import TemplateLookup


class StoreError(Exception):
    """A store that cannot start (an unparsable manifest, no cluster access); one line for the user."""


@runtime_checkable
class ObjectStore(Protocol):
    @property
    def ready(self) -> bool:
        """True once the store holds everything it should (always, once started, for files)."""

    @property
    def size(self) -> int:
        """How many PodCliqueSets the store holds."""

    def get(self, namespace: str, name: str) -> PodCliqueSet | None:
        """The PodCliqueSet from memory: O(1), never blocks."""

    async def fetch(self, namespace: str, name: str) -> PodCliqueSet | None:
        """After a ``get`` miss: at most one bounded read from the source (None for files)."""

    async def start(self) -> None:
        """Loads what the store serves; raises ``StoreError`` when it cannot. A cluster store
        returns once its watch is running and keeps syncing; ``ready`` tells when it has."""

    async def stop(self) -> None:
        """Stops background work; idempotent."""


@runtime_checkable
class AuthorizingStore(Protocol):
    """A store connected to an API server, which can also answer who may read what there."""

    def template_access(self) -> TemplateAccess:
        """Whether a user may get a ResourceClaimTemplate, as the API server answers it (once
        started; stopped with the store)."""

    def template_lookup(self) -> TemplateLookup:
        """Whether a ResourceClaimTemplate exists, as the API server answers it (once started)."""

    def template_reviews(self) -> Mapping[str, int]:
        """The SubjectAccessReviews made so far, by result (none before the first)."""
