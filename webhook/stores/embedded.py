"""The embedded object store: PodCliqueSets read once from manifest files at start-up.

For running without a cluster (``make run``, ``review``, tests and benchmarks). Everything is
parsed when the store starts and kept as the pod webhook reads it, so a request only looks a dict
up; the files are not watched.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.stores import manifests


class EmbeddedStore:
    def __init__(self, paths: Sequence[Path] = ()) -> None:
        self.paths = list(paths)
        self._objects: dict[tuple[str, str], PodCliqueSet] = {}
        """By ``ObjectKey``; looked up by plain (namespace, name) tuples, which equal them."""
        self._ready = False

    @classmethod
    def of(cls, objects: Iterable[PodCliqueSet]) -> EmbeddedStore:
        """A started store holding ``objects`` (keyed by their namespace and name)."""
        store = cls()
        store._objects = {pcs.key: pcs for pcs in objects}
        store._ready = True
        return store

    @property
    def ready(self) -> bool:
        return self._ready

    @property
    def size(self) -> int:
        return len(self._objects)

    def get(self, namespace: str, name: str) -> PodCliqueSet | None:
        return self._objects.get((namespace, name))

    async def fetch(self, namespace: str, name: str) -> PodCliqueSet | None:
        """Files have nothing more to give than what was loaded."""
        return None

    def load(self) -> None:
        """Reads the manifests; raises ``StoreError`` naming the file and document of a bad one."""
        self._objects = manifests.load(self.paths)
        self._ready = True

    async def start(self) -> None:
        self.load()

    async def stop(self) -> None:
        return None
