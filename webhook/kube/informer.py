"""List+watch caches of one resource, kept current in a background thread, as client-go's
informers keep Go controllers': readers never wait on the network, a watch resumes from the last
resourceVersion it saw and re-lists on 410 Gone, and a handler hears of every change, those a
re-list finds included. The watch is read line by line from the client's raw response rather than
through ``kubernetes.watch.Watch``, so that ``stop`` can shut it at once and objects stay plain
dicts (``Watch`` looks up typed models, which fails for some resource.k8s.io kinds).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import orjson
import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.watch.watch import iter_resp_lines

from webhook.core.model.meta import ObjectKey
from webhook.kube.api import Resource, connection_problem
from webhook.kube.attempts import Attempts

log = logging.getLogger(__name__)

T = TypeVar("T")
Handler = Callable[[str, dict[str, Any]], None]
"""Called with ``ADDED``, ``MODIFIED`` or ``DELETED`` and the raw object, in the informer thread."""

GONE = 410
LIST_PAGE_SIZE = 500  # as client-go's reflector asks
_KEPT_METADATA = ("namespace", "name", "uid", "resourceVersion", "labels", "ownerReferences")
_decode = json.JSONDecoder().raw_decode
_SPACE = re.compile(r"[ \t\n\r]*")


def object_key(obj: dict[str, Any]) -> ObjectKey:
    metadata = obj.get("metadata") or {}
    return ObjectKey(metadata.get("namespace") or "", metadata.get("name") or "")


def _unchanged(obj: dict[str, Any]) -> Any:
    return obj


def _version(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class Informer(Generic[T]):
    """``resource`` in ``namespace`` (None: all), each object as ``transform`` makes it (the webhook
    keeps parsed PodCliqueSets, so that no request parses one); one it rejects with ``ValueError``
    is logged and left out."""

    def __init__(
        self, api: client.ApiClient, resource: Resource, *, namespace: str | None = None, label_selector: str | None = None,
        transform: Callable[[dict[str, Any]], T] = _unchanged, handler: Handler | None = None,
        on_recovered: Callable[[], None] | None = None, watch_timeout_seconds: int = 300, request_timeout_seconds: float = 30.0,
    ) -> None:
        self.resource, self.namespace, self.label_selector = resource, namespace, label_selector
        self._api = client.CustomObjectsApi(api)
        self._transform, self._handler = transform, handler
        self._watch_timeout, self._request_timeout = watch_timeout_seconds, request_timeout_seconds
        self._cache: dict[tuple[str, str], T] = {}
        self._known: dict[tuple[str, str], str] = {}
        """The resourceVersion of each cached object, which a re-list compares whatever ``T`` is."""
        self._resource_version = ""
        self._synced = threading.Event()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._response: urllib3.BaseHTTPResponse | None = None
        self._thread = threading.Thread(target=self._run, name=f"informer-{resource.plural}", daemon=True)
        self.attempts = Attempts(f"list/watch of {resource}", on_recovered)

    def get(self, namespace: str, name: str) -> T | None:
        return self._cache.get((namespace, name))

    def list(self) -> list[T]:
        return list(self._cache.values())

    def __len__(self) -> int:
        return len(self._cache)

    @property
    def synced(self) -> bool:
        """The first list is in: before, an empty cache means "unknown", not "none"."""
        return self._synced.is_set()

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stops at once: the open watch is shut (unless its socket is closed already), not waited out."""
        self._stopping.set()
        with self._lock:
            if self._response is not None:
                with contextlib.suppress(OSError):
                    self._response.shutdown()
        self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                if not self._resource_version:
                    self._relist()
                    self.attempts.succeeded()
                self._watch()
                self.attempts.reset()
            except ApiException as err:
                if err.status == GONE:
                    log.info("watch of %s expired (410 Gone); re-listing", self.resource)
                    self._resource_version = ""
                    continue
                self._stopping.wait(self.attempts.failed(connection_problem(err)))
            except Exception as err:  # noqa: BLE001 - any failure of one attempt is retried
                if self._stopping.is_set():
                    break
                self._stopping.wait(self.attempts.failed(connection_problem(err)))

    def _call(self, **kwargs: Any) -> Any:
        group, version, plural = self.resource.group, self.resource.version, self.resource.plural
        kwargs["label_selector"] = self.label_selector  # None: not sent
        if self.namespace:
            return self._api.list_namespaced_custom_object(group, version, self.namespace, plural, **kwargs)
        return self._api.list_cluster_custom_object(group, version, plural, **kwargs)

    def _relist(self) -> None:
        """Hands each object to the cache and the handler as soon as it is read, as a watch event
        would; then reports DELETED what the list no longer has."""
        seen: set[tuple[str, str]] = set()

        def take(item: dict[str, Any]) -> None:
            item.setdefault("apiVersion", self.resource.api_version)
            item.setdefault("kind", self.resource.kind)
            key = object_key(item)
            value = self._safe_transform(item)
            if value is None:
                return
            seen.add(key)
            version, before = _version(item), self._known.get(key)
            kind = "ADDED" if key not in self._cache else "MODIFIED" if before != version else None
            self._cache[key], self._known[key] = value, version
            if kind is not None:
                self._notify(kind, item)

        token = None  # not sent
        while True:
            response = self._call(limit=LIST_PAGE_SIZE, _continue=token, _preload_content=False, _request_timeout=self._request_timeout)
            try:
                metadata = read_list(response.data, take).get("metadata") or {}
            finally:
                response.release_conn()
            token = metadata.get("continue") or None
            if not token:
                break
        self._resource_version = metadata.get("resourceVersion", "")
        for key in self._cache.keys() - seen:
            self._forget_listed(key)
        self._synced.set()

    def _forget_listed(self, key: tuple[str, str]) -> None:
        """A deletion a re-list found, reported with what the cache kept of the object's metadata."""
        gone = self._cache.pop(key)
        self._known.pop(key, None)
        kept = (gone.get("metadata") or {}) if isinstance(gone, dict) else {}
        metadata = {f: kept[f] for f in _KEPT_METADATA if f in kept} | {"namespace": key[0], "name": key[1]}
        self._notify("DELETED", {"apiVersion": self.resource.api_version, "kind": self.resource.kind, "metadata": metadata})

    def _watch(self) -> None:
        response = self._call(
            watch=True, allow_watch_bookmarks=True, resource_version=self._resource_version, timeout_seconds=self._watch_timeout,
            _preload_content=False, _request_timeout=(self._request_timeout, self._watch_timeout + self._request_timeout),
        )
        with self._lock:
            if self._stopping.is_set():
                response.close()
                return
            self._response = response
        self.attempts.succeeded()
        try:
            for line in iter_resp_lines(response):
                if line:
                    self._apply(orjson.loads(line))
                if self._stopping.is_set():
                    return
        finally:
            with self._lock:
                self._response = None
            response.close()
            response.release_conn()

    def _apply(self, event: dict[str, Any]) -> None:
        kind, obj = event["type"], event.get("object") or {}
        if kind == "ERROR":
            raise ApiException(status=obj.get("code", 500), reason=f"{obj.get('reason')}: {obj.get('message')}")
        version = _version(obj)
        if kind == "BOOKMARK":
            self._resource_version = version or self._resource_version
            return
        key = object_key(obj)
        value = None if kind == "DELETED" else self._safe_transform(obj)
        if value is None:
            self._cache.pop(key, None)
            self._known.pop(key, None)
        else:
            self._cache[key], self._known[key] = value, version
        self._resource_version = version or self._resource_version
        self._notify(kind, obj)  # ADDED, MODIFIED or DELETED: a watch sends no other type

    def _safe_transform(self, obj: dict[str, Any]) -> T | None:
        try:
            return self._transform(obj)
        except ValueError as err:
            namespace, name = object_key(obj)
            log.warning("ignoring %s %s/%s: %s", self.resource.kind, namespace, name, str(err).splitlines()[0])
            return None

    def _notify(self, kind: str, obj: dict[str, Any]) -> None:
        if self._handler is None:
            return
        try:
            self._handler(kind, obj)
        except Exception:  # noqa: BLE001 - a handler bug must not stop the watch
            log.exception("handler for %s failed", self.resource)


class Informers(Generic[T]):
    """One resource watched in several namespaces and read as one cache: an informer per
    namespace (a List and a watch each, which a Role in each namespace allows), or one for all."""

    def __init__(self, resource: Resource, namespaces: Sequence[str], build: Callable[[str | None], Informer[T]]) -> None:
        self.resource = resource
        watched: list[str | None] = list(namespaces) or [None]
        self._by_namespace = {n: build(n) for n in watched}

    def get(self, namespace: str, name: str) -> T | None:
        found = self._by_namespace
        informer = found[None] if None in found else found.get(namespace)
        return informer.get(namespace, name) if informer is not None else None

    def list(self) -> list[T]:
        return [item for informer in self for item in informer.list()]

    def __iter__(self) -> Iterator[Informer[T]]:
        return iter(self._by_namespace.values())

    def __len__(self) -> int:
        return sum(len(informer) for informer in self)

    @property
    def synced(self) -> bool:
        return all(informer.synced for informer in self)

    def start(self) -> None:
        for informer in self:
            informer.start()

    def stop(self) -> None:
        for informer in self:
            informer.stop()


def _skip(text: str, at: int, expected: str = "") -> int:
    """The position after the white space at ``at`` (and after ``expected``, which must come next)."""
    end = _SPACE.match(text, at)
    at = end.end() if end else at
    if expected:
        if not text.startswith(expected, at):
            raise ValueError(f"expected {expected!r} at character {at}")
        at += len(expected)
    return at


def _each(text: str, at: int, close: str, read: Callable[[int], int]) -> int:
    """Reads the elements of an object or array opened before ``at`` with ``read`` (from where one
    starts to where it ends); the position after ``close``."""
    at = _skip(text, at)
    if text.startswith(close, at):
        return at + 1
    while True:
        at = _skip(text, read(_skip(text, at)))
        if text.startswith(close, at):
            return at + 1
        at = _skip(text, at, ",")


def read_list(data: bytes, take: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Every member of the List but ``items``, each of which goes to ``take`` as soon as it is parsed
    (if an object): a page parsed whole is many times its size in Python objects, most of them pod
    specs that no cache keeps. ``RecursionError`` for a value nested deeper than Python can parse."""
    text = data.decode()
    members: dict[str, Any] = {}

    def item(at: int) -> int:
        value, at = _decode(text, at)
        if isinstance(value, dict):
            take(value)
        return at

    def member(at: int) -> int:
        name, at = _decode(text, at)
        if not isinstance(name, str):
            raise ValueError(f"expected a member name before character {at}")
        at = _skip(text, _skip(text, at, ":"))
        if name == "items" and text.startswith("[", at):
            return _each(text, at + 1, "]", item)
        members[name], at = _decode(text, at)
        return at

    _each(text, _skip(text, 0, "{"), "}", member)
    return members
