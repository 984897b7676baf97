"""An object store held in a dict, for building apps in tests without files or a cluster."""

from __future__ import annotations

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.projection import PodCliqueSetSharing, project


class MemoryStore:
    def __init__(self, *objects: PodCliqueSet, ready: bool = True) -> None:
        self.objects = {sharing.key: sharing for sharing in map(project, objects)}
        self.ready = ready

    @property
    def size(self) -> int:
        return len(self.objects)

    def get(self, namespace: str, name: str) -> PodCliqueSetSharing | None:
        return self.objects.get((namespace, name))

    async def fetch(self, namespace: str, name: str) -> PodCliqueSetSharing | None:
        return None

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None
