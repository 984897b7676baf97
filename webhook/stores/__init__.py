"""Where the webhooks find PodCliqueSets: manifest files (``manifests``, the embedded store), or a
watch cache of a cluster (``cluster``, imported only when used so that ``review`` and local runs do
not load the Kubernetes client).

The request path calls ``get``, which answers from memory, and at most one ``fetch`` on a miss, so
a webhook call never waits on more than one bounded API request. A store keeps each PodCliqueSet
without its templates: the few hundred bytes of it the pod webhook reads, never the whole object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pcs.authorization import TemplateAccess, TemplateLookup
from webhook.settings import DecisionSettings, ServeSettings
from webhook.stores.manifests import EmbeddedStore, StoreError

__all__ = ["AuthorizingStore", "EmbeddedStore", "ObjectStore", "StoreError", "build_store"]


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


def build_store(settings: DecisionSettings) -> ObjectStore:
    if isinstance(settings, ServeSettings) and settings.uses_cluster:
        from webhook.stores.cluster import ClusterStore

        return ClusterStore(settings.kubeconfig, settings.namespace, context=settings.context)
    return EmbeddedStore(settings.objects)
