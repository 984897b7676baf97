"""The embedded object store: PodCliqueSets read once from manifest files as ``kubectl apply -f``
takes them, for running without a cluster. A directory's files are read in name order, not
recursively; objects of other kinds are skipped, since a workload's manifests usually carry
ResourceClaimTemplates beside the PodCliqueSet. A problem ends loading with one line naming the
file and document (counted from 1), so that a typo is found before the server takes traffic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import orjson
import yaml
from pydantic import ValidationError

from webhook.core.model.meta import DEFAULT_NAMESPACE, ObjectKey, ObjectMeta, first_problem
from webhook.core.model.podcliqueset import PodCliqueSet, read_without_templates

SUFFIXES = (".yaml", ".yml", ".json")
GROUP = "grove.io"
KIND = "PodCliqueSet"

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StoreError(Exception):
    """A store that cannot start (an unparsable manifest, no cluster access); one line. Defined
    here, where most are raised, since the package's ``__init__`` imports this module."""


def manifest_files(paths: Sequence[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file())
        elif path.is_file():
            yield path
        else:
            raise StoreError(f"{path}: no such file or directory")


def _documents(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        text = path.read_bytes()
    except OSError as err:
        raise StoreError(f"{path}: cannot be read: {err.strerror or err}") from None
    if path.suffix == ".json":
        try:
            yield 1, orjson.loads(text)
        except orjson.JSONDecodeError as err:
            raise StoreError(f"{path}: not valid JSON: {err}") from None
        return
    number = 0
    try:
        for number, document in enumerate(yaml.load_all(text, Loader=_Loader), start=1):  # noqa: S506 - a safe loader
            yield number, document
    except yaml.YAMLError as err:
        raise StoreError(f"{path}: document {number + 1}: not valid YAML: {_yaml_problem(err)}") from None


def _yaml_problem(err: yaml.YAMLError) -> str:
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    mark = getattr(err, "problem_mark", None)
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else str(problem)


def _objects(document: Any, where: str) -> Iterator[dict[str, Any]]:
    """The objects of one document: itself, or the items of a ``List``."""
    if document is None:
        return
    if not isinstance(document, dict):
        raise StoreError(f"{where}: expected a Kubernetes object (a mapping), found {type(document).__name__}")
    if isinstance(document.get("kind"), str) and document["kind"].endswith("List") and "items" in document:
        items = document["items"] or []
        if not isinstance(items, list):
            raise StoreError(f"{where}: items of a {document['kind']} must be a list")
        for item in items:
            yield from _objects(item, where)
        return
    yield document


def is_grove_object(obj: dict[str, Any], kind: str) -> bool:
    """Whether ``obj`` is a ``grove.io`` object of ``kind`` (any version)."""
    api_version = obj.get("apiVersion")
    return obj.get("kind") == kind and isinstance(api_version, str) and api_version.partition("/")[0] == GROUP


class Named(Protocol):
    @property
    def metadata(self) -> ObjectMeta: ...


N = TypeVar("N", bound=Named)


def read_object(read: Callable[[Any], N], kind: str, obj: dict[str, Any], where: str) -> N:
    """One object of a manifest (``kind`` names it in messages), in ``default`` when it names no
    namespace."""
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and not metadata.get("namespace"):
        obj = {**obj, "metadata": {**metadata, "namespace": DEFAULT_NAMESPACE}}
    try:
        found = read(obj)
    except ValidationError as err:
        raise StoreError(f"{where}: {kind} cannot be read: {first_problem(err)}") from None
    if not found.metadata.name:
        raise StoreError(f"{where}: {kind} has no metadata.name")
    return found


def manifest_objects(paths: Sequence[Path]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object of every manifest in ``paths``, with where it is (``<file>: document <n>``)."""
    for path in manifest_files(paths):
        for number, document in _documents(path):
            where = f"{path}: document {number}"
            for obj in _objects(document, where):
                yield where, obj


class EmbeddedStore:
    def __init__(self, paths: Sequence[Path] = ()) -> None:
        self.paths = list(paths)
        self._objects: dict[tuple[str, str], PodCliqueSet] = {}
        """By ``ObjectKey``; looked up by plain (namespace, name) tuples, which equal them."""
        self.ready = False

    @classmethod
    def of(cls, objects: Iterable[PodCliqueSet]) -> EmbeddedStore:
        """A started store holding ``objects`` (keyed by their namespace and name)."""
        store = cls()
        store._objects = {pcs.key: pcs for pcs in objects}
        store.ready = True
        return store

    @property
    def size(self) -> int:
        return len(self._objects)

    def get(self, namespace: str, name: str) -> PodCliqueSet | None:
        return self._objects.get((namespace, name))

    async def fetch(self, namespace: str, name: str) -> PodCliqueSet | None:
        return None

    def load(self) -> None:
        """Reads the manifests, each PodCliqueSet as the store keeps it (without its templates); a
        bad file or document, or a PodCliqueSet defined twice, is a ``StoreError`` naming it."""
        found: dict[tuple[str, str], PodCliqueSet] = {}
        origin: dict[ObjectKey, str] = {}
        for where, obj in manifest_objects(self.paths):
            if not is_grove_object(obj, KIND):
                continue
            pcs = read_object(read_without_templates, KIND, obj, where)
            key = pcs.key
            if key in found:
                raise StoreError(f"{where}: PodCliqueSet {key} is already defined in {origin[key]}")
            found[key], origin[key] = pcs, where
        self._objects = found
        self.ready = True

    async def start(self) -> None:
        self.load()

    async def stop(self) -> None:
        return None
