"""One resource watched in several namespaces, read as one cache: a ``reconcile --namespace a
--namespace b`` keeps an informer per namespace (a List and a watch each, which a Role in each
namespace allows), and its reads do not care which one holds an object."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Generic

from webhook.kube.informer import Informer, T
from webhook.kube.resources import Resource


class Informers(Generic[T]):
    def __init__(self, resource: Resource, namespaces: Sequence[str], build: Callable[[str | None], Informer[T]]) -> None:
        """``build(namespace)`` makes the informer of one namespace (None: all of them, when
        ``namespaces`` is empty)."""
        self.resource = resource
        watched: list[str | None] = list(namespaces) or [None]
        self._by_namespace: dict[str | None, Informer[T]] = {n: build(n) for n in watched}

    def _of(self, namespace: str) -> Informer[T] | None:
        found = self._by_namespace
        return found[None] if None in found else found.get(namespace)

    def get(self, namespace: str, name: str) -> T | None:
        informer = self._of(namespace)
        return informer.get(namespace, name) if informer is not None else None

    def list(self) -> list[T]:
        return [item for informer in self._by_namespace.values() for item in informer.list()]

    def __iter__(self) -> Iterator[Informer[T]]:
        """The informers themselves, one per namespace watched."""
        return iter(self._by_namespace.values())

    def __len__(self) -> int:
        return sum(len(informer) for informer in self._by_namespace.values())

    @property
    def synced(self) -> bool:
        return all(informer.synced for informer in self._by_namespace.values())

    def start(self) -> None:
        for informer in self._by_namespace.values():
            informer.start()

    def stop(self, timeout: float = 5.0) -> None:
        for informer in self._by_namespace.values():
            informer.stop(timeout)
