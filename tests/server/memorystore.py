"""An object store held in a dict, for building apps in tests without files or a cluster."""

from __future__ import annotations

from webhook.core.model.podcliqueset import PodCliqueSet


class MemoryStore:
    def __init__(self, *objects: PodCliqueSet, ready: bool = True) -> None:
        self.objects = {pcs.key: pcs for pcs in objects}
        self.ready = ready

    @property
    def size(self) -> int:
        return len(self.objects)

    def get(self, namespace: str, name: str) -> PodCliqueSet | None:
        return self.objects.get((namespace, name))

    async def fetch(self, namespace: str, name: str) -> PodCliqueSet | None:
        return None

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None
