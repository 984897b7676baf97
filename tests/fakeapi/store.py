"""The object store: what etcd plus the API server's generic registry do.

One lock guards everything, and one global counter numbers every write (the
resourceVersion, as a string on the wire, as etcd's revision is). Stored
objects are never mutated in place: each write stores a fresh dict, so a dict
handed to a watch or serialised outside the lock cannot change under it.
Callers that give objects away to code that may mutate them copy them first.

Writes follow the real server's rules: optimistic concurrency on
``metadata.resourceVersion``, server-owned metadata kept, ``generation``
bumped on spec changes only, no-op updates not written, status-subresource
rules. The ``api`` flag separates the HTTP API (which enforces those rules)
from test hooks (which may set status or a uid directly). Deletion, finalizers
and garbage collection live in `lifecycle`.
"""

from __future__ import annotations

import asyncio
import bisect
import copy
import random
import threading
import uuid
from collections.abc import Iterator
from typing import Any

from . import errors
from .lifecycle import Lifecycle, Obj, ObjKey, now
from .patching import PatchError, apply_patch
from .resources import Registry, ResourceType
from .selectors import FieldSelector, LabelSelector
from .watches import Change, TooOld, Watcher, WatchHub, wire

_SERVER_OWNED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # what the real name generator draws from
EVERYTHING = LabelSelector.parse("")


def _body(obj: Obj) -> Obj:
    """Everything but metadata and status: a change here bumps ``generation``."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


class Store(Lifecycle):
    """In-memory objects of every registered resource, with watch history."""

    def __init__(self, registry: Registry, history_limit: int = 10_000) -> None:
        self.registry = registry
        self.lock = threading.RLock()
        self.hub = WatchHub(history_limit)
        self._rv = 0
        self._objects: dict[tuple[str, str, str], dict[tuple[str, str], Obj]] = {}
        self._sorted: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
        """Each resource's keys in list order, kept until a key comes or goes: a list of 200,000
        claims in pages of 500 would sort them 400 times."""
        self._by_uid: dict[str, ObjKey] = {}
        self._dependents: dict[str, set[ObjKey]] = {}

    @property
    def resource_version(self) -> int:
        return self._rv

    # ---- reads -----------------------------------------------------------
    def find(self, rt: ResourceType, namespace: str | None, name: str) -> Obj | None:
        return self._objects.get(rt.key, {}).get((namespace or "" if rt.namespaced else "", name))

    def get(self, rt: ResourceType, namespace: str | None, name: str) -> Obj:
        with self.lock:
            if (obj := self.find(rt, namespace, name)) is None:
                raise errors.not_found(rt, name)
            return obj

    def objects(self, rt: ResourceType) -> dict[tuple[str, str], Obj]:
        """The stored objects of one resource by (namespace, name), unsorted; hold the lock."""
        return self._objects.get(rt.key, {})

    def _keys(self, rt: ResourceType) -> list[tuple[str, str]]:
        keys = self._sorted.get(rt.key)
        if keys is None:
            keys = self._sorted[rt.key] = sorted(self._objects.get(rt.key, {}))
        return keys

    def _matching(self, rt: ResourceType, namespace: str | None, labels: LabelSelector,
                  fields: FieldSelector | None, after: tuple[str, str] | None = None) -> Iterator[Obj]:
        keys, objects = self._keys(rt), self._objects.get(rt.key, {})
        for key in keys[bisect.bisect_right(keys, after):] if after is not None else keys:
            obj = objects[key]
            if (namespace is None or key[0] == namespace) and labels.matches(obj) \
                    and (fields is None or fields.matches(obj)):
                yield obj

    def list_objects(self, rt: ResourceType, namespace: str | None = None, labels: LabelSelector = EVERYTHING,
             fields: FieldSelector | None = None) -> tuple[list[Obj], int]:
        """Matching objects sorted by namespace/name, and the RV they are as of."""
        with self.lock:
            return list(self._matching(rt, namespace, labels, fields)), self._rv

    def list_page(self, rt: ResourceType, namespace: str | None, labels: LabelSelector, fields: FieldSelector | None,
                  limit: int, after: tuple[str, str] | None) -> tuple[list[Obj], tuple[str, str] | None]:
        """At most ``limit`` matching objects whose (namespace, name) sorts after ``after``, and the key
        to continue after when more match."""
        with self.lock:
            page: list[Obj] = []
            for obj in self._matching(rt, namespace, labels, fields, after):
                if len(page) == limit:
                    last = page[-1]["metadata"]
                    return page, (last.get("namespace", ""), last["name"])
                page.append(obj)
            return page, None

    # ---- writes ----------------------------------------------------------
    def _write(self, rt: ResourceType, old: Obj | None, new: Obj, event: str) -> Obj:
        self._rv += 1
        new["metadata"]["resourceVersion"] = str(self._rv)
        meta = new["metadata"]
        key: ObjKey = (rt.key, meta.get("namespace", ""), meta["name"])
        stored = self._objects.setdefault(rt.key, {})
        if key[1:] not in stored:
            self._sorted.pop(rt.key, None)
        stored[key[1:]] = new
        self._by_uid[meta["uid"]] = key
        self._index_owners(old, key, add=False)
        self._index_owners(new, key, add=True)
        self.hub.publish(Change(self._rv, event, rt.key, old, new))
        return new

    def _remove(self, rt: ResourceType, old: Obj) -> Obj:
        self._rv += 1
        final = {**old, "metadata": {**old["metadata"], "resourceVersion": str(self._rv)}}
        meta = old["metadata"]
        key: ObjKey = (rt.key, meta.get("namespace", ""), meta["name"])
        stored = self._objects[rt.key].pop(key[1:])
        self._sorted.pop(rt.key, None)
        self._by_uid.pop(meta["uid"], None)
        self._index_owners(stored, key, add=False)
        self.hub.publish(Change(self._rv, "DELETED", rt.key, old, final))
        return final

    def _index_owners(self, obj: Obj | None, key: ObjKey, *, add: bool) -> None:
        for ref in (obj or {}).get("metadata", {}).get("ownerReferences") or []:
            if add:
                self._dependents.setdefault(ref.get("uid", ""), set()).add(key)
            else:
                self._dependents.get(ref.get("uid", ""), set()).discard(key)

    def _prepare(self, rt: ResourceType, namespace: str | None, body: Any) -> Obj:
        """A private copy of a request body, checked against the URL it came to."""
        if not isinstance(body, dict) or not isinstance(body.get("metadata", {}), dict):
            raise errors.bad_request("the request body is not a Kubernetes object")
        rest = copy.deepcopy(body)
        for field, want in (("apiVersion", rt.api_version), ("kind", rt.kind)):
            if rest.get(field, want) != want:
                raise errors.bad_request(f"the {field} in the data ({rest[field]}) does not match "
                                         f"the expected {field} ({want})")
        obj = {"apiVersion": rt.api_version, "kind": rt.kind, **rest}
        meta = obj.setdefault("metadata", {})
        if rt.namespaced:
            namespace = namespace or meta.get("namespace") or "default"
            if meta.get("namespace", namespace) != namespace:
                raise errors.bad_request("the namespace of the provided object does not match "
                                         "the namespace sent on the request")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        return obj

    def create(self, rt: ResourceType, namespace: str | None, body: Any, *, api: bool = True) -> Obj:
        obj = self._prepare(rt, namespace, body)
        meta = obj["metadata"]
        with self.lock:
            if not meta.get("name"):
                if not meta.get("generateName"):
                    raise errors.invalid(rt, "", "metadata.name", "Required value",
                                         "name or generateName is required")
                while True:
                    meta["name"] = meta["generateName"] + "".join(random.choices(_NAME_CHARS, k=5))
                    if self.find(rt, meta.get("namespace"), meta["name"]) is None:
                        break
            if self.find(rt, meta.get("namespace"), meta["name"]) is not None:
                raise errors.already_exists(rt, meta["name"])
            if api or not meta.get("uid"):
                meta["uid"] = str(uuid.uuid4())
            if api or not meta.get("creationTimestamp"):
                meta["creationTimestamp"] = now()
            meta["generation"] = 1
            for field in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
                meta.pop(field, None)
            if api and rt.status_subresource:
                obj.pop("status", None)
            return self._write(rt, None, obj, "ADDED")

    def update(self, rt: ResourceType, namespace: str | None, name: str, body: Any, *,
               subresource: str | None = None, api: bool = True) -> Obj:
        """PUT: optimistic concurrency on ``metadata.resourceVersion``."""
        new = self._prepare(rt, namespace, body)
        if new["metadata"].get("name", name) != name:
            raise errors.bad_request(f"the name of the object ({new['metadata']['name']}) does not "
                                     f"match the name on the URL ({name})")
        new["metadata"]["name"] = name
        with self.lock:
            old = self.find(rt, namespace, name)
            if old is None:
                if rt.create_on_update and subresource is None:
                    return self.create(rt, namespace, new, api=api)
                raise errors.not_found(rt, name)
            given = new["metadata"].get("resourceVersion")
            if given is None and rt.crd and api:
                raise errors.invalid(rt, name, "metadata.resourceVersion", "Invalid value",
                                     "must be specified for an update", 0)
            if given is not None and given != old["metadata"]["resourceVersion"]:
                raise errors.stale(rt, name)
            return self._update(rt, old, new, subresource, api)

    def patch(self, rt: ResourceType, namespace: str | None, name: str, body: Any, content_type: str,
              *, subresource: str | None = None, api: bool = True) -> Obj:
        with self.lock:
            old = self.find(rt, namespace, name)
            if old is None:
                raise errors.not_found(rt, name)
            try:
                new = apply_patch(old, body, content_type)
            except PatchError as exc:
                raise errors.ApiError(422, "Invalid", str(exc)) from exc
            if new.get("metadata", {}).get("resourceVersion") not in (None, old["metadata"]["resourceVersion"]):
                raise errors.stale(rt, name)
            new = self._prepare(rt, namespace, new)
            new["metadata"]["name"] = name
            return self._update(rt, old, new, subresource, api)

    def _update(self, rt: ResourceType, old: Obj, new: Obj, subresource: str | None, api: bool) -> Obj:
        meta, old_meta = new["metadata"], old["metadata"]
        for field in _SERVER_OWNED:
            meta.pop(field, None)
            if field in old_meta:
                meta[field] = old_meta[field]
        if subresource == "status":
            new = {**copy.deepcopy({k: v for k, v in old.items() if k != "status"}),
                   **({"status": new["status"]} if "status" in new else {})}
            meta = new["metadata"]
        elif api and rt.status_subresource:
            new.pop("status", None)
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
        if old_meta.get("deletionTimestamp") and set(meta.get("finalizers") or ()) - set(old_meta.get("finalizers") or ()):
            raise errors.invalid(rt, meta["name"], "metadata.finalizers", "Forbidden",
                                 "no new finalizers can be added if the object is being deleted")
        if _body(new) != _body(old):
            meta["generation"] = old_meta.get("generation", 0) + 1
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if new == old:
            return old  # a no-op update writes nothing and sends no event, as in etcd
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            return self._remove_and_collect(rt, new)
        return self._write(rt, old, new, "MODIFIED")

    # ---- watches ---------------------------------------------------------
    def open_watch(self, rt: ResourceType, namespace: str | None, labels: LabelSelector,
                   fields: FieldSelector, resource_version: str | None,
                   loop: asyncio.AbstractEventLoop | None) -> tuple[list[bytes], Watcher | None]:
        """Initial wire events and a registered watcher (None when the watch ends at once)."""
        watcher = Watcher(rt, namespace, labels, fields, loop)
        with self.lock:
            if resource_version in (None, "", "0"):
                initial = [wire("ADDED", obj) for obj in self._matching(rt, namespace, labels, fields)]
            else:
                try:
                    since = int(resource_version)
                    changes = self.hub.since(since)
                except ValueError:
                    raise errors.bad_request(f"invalid resource version: {resource_version!r}") from None
                except TooOld as old:
                    return [wire("ERROR", errors.expired(old.requested, old.oldest).status)], None
                initial = [event for change in changes if (event := watcher.translate(change))]
            self.hub.watchers.add(watcher)
            return initial, watcher

    def close_watch(self, watcher: Watcher) -> None:
        with self.lock:
            self.hub.watchers.discard(watcher)

    def compact(self) -> None:
        with self.lock:
            self.hub.compact(self._rv)

    def expire_watches(self) -> int:
        with self.lock:
            return self.hub.close_all()

    def clear(self) -> None:
        """Drop every object, the history and open watches; the RV keeps counting."""
        with self.lock:
            self._objects.clear()
            self._sorted.clear()
            self._by_uid.clear()
            self._dependents.clear()
            self.hub.compact(self._rv)
            self.hub.close_all()
