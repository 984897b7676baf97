"""Where the webhooks find PodCliqueSets: manifest files (``manifests``), or a watch cache of a
cluster (``cluster``), imported only when used so that ``review`` and local runs do not load the
Kubernetes client."""

from __future__ import annotations

from webhook.settings import DecisionSettings, ServeSettings
from webhook.stores.base import ObjectStore, StoreError
from webhook.stores.manifests import EmbeddedStore

__all__ = ["EmbeddedStore", "ObjectStore", "StoreError", "build_store"]


def build_store(settings: DecisionSettings) -> ObjectStore:
    if isinstance(settings, ServeSettings) and settings.uses_cluster:
        from webhook.stores.cluster import ClusterStore

        return ClusterStore(settings.kubeconfig, settings.namespace, context=settings.context)
    return EmbeddedStore(settings.objects)
