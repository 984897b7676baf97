"""Deletion as the real API server and its controllers do it, made synchronous.

- Finalizers: deleting an object that has ``metadata.finalizers`` only sets
  ``deletionTimestamp`` (a MODIFIED event); the update that empties them
  removes it.
- Garbage collection (kube-controller-manager's job): removing an object
  deletes every dependent whose ``ownerReferences`` name no other live owner,
  recursively, and unlinks it from dependents that keep another owner.
  ``Background`` removes the owner first, ``Foreground`` the dependents first
  (without waiting for their finalizers), ``Orphan`` only unlinks them.
- Deleting a namespace deletes everything in it (the namespace controller).

Each removal is its own DELETED event, so watches see what they would see
from a real cluster, only without the delay.
"""

from __future__ import annotations

import copy
import datetime
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from . import errors
from .resources import Registry, ResourceType
from .selectors import FieldSelector, LabelSelector

Obj = dict[str, Any]
ObjKey = tuple[tuple[str, str, str], str, str]  # (resource key, namespace or "", name)


def now() -> str:
    """A creation/deletion timestamp as the API server writes it (RFC 3339, seconds)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Lifecycle:
    """Deletion, finalizers and garbage collection; mixed into `Store`."""

    registry: Registry
    lock: threading.RLock
    _objects: dict[tuple[str, str, str], dict[tuple[str, str], Obj]]
    _by_uid: dict[str, ObjKey]
    _dependents: dict[str, set[ObjKey]]

    if TYPE_CHECKING:
        def find(self, rt: ResourceType, namespace: str | None, name: str) -> Obj | None: ...
        def _write(self, rt: ResourceType, old: Obj | None, new: Obj, event: str) -> Obj: ...
        def _remove(self, rt: ResourceType, old: Obj) -> Obj: ...
        def _matching(self, rt: ResourceType, namespace: str | None, labels: LabelSelector,
                      fields: FieldSelector | None) -> Iterator[Obj]: ...

    def delete(self, rt: ResourceType, namespace: str | None, name: str,
               options: dict[str, Any] | None = None) -> tuple[Obj, bool]:
        """DELETE honouring preconditions; returns (object, removed now?)."""
        options = options or {}
        with self.lock:
            old = self.find(rt, namespace, name)
            if old is None:
                raise errors.not_found(rt, name)
            pre = options.get("preconditions") or {}
            for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
                if pre.get(field) and pre[field] != old["metadata"].get(field):
                    raise errors.conflict(rt, name, f"Precondition failed: {label} in precondition: "
                                                    f"{pre[field]}, {label} in object meta: {old['metadata'].get(field)}")
            return self._delete(rt, old, _propagation(options))

    def _delete(self, rt: ResourceType, old: Obj, policy: str) -> tuple[Obj, bool]:
        meta = old["metadata"]
        if meta.get("finalizers"):
            if meta.get("deletionTimestamp"):
                return old, False
            marked = copy.deepcopy(old)
            marked["metadata"].update(deletionTimestamp=now(), deletionGracePeriodSeconds=0)
            return self._write(rt, old, marked, "MODIFIED"), False
        if policy == "Foreground":
            self._collect(meta["uid"], policy)
        elif policy == "Orphan":
            self._orphan(meta["uid"])
        return self._remove_and_collect(rt, old, collect=policy == "Background"), True

    def _remove_and_collect(self, rt: ResourceType, old: Obj, collect: bool = True) -> Obj:
        final = self._remove(rt, old)
        if collect:
            self._collect(old["metadata"]["uid"], "Background")
        if rt.key == ("", "v1", "namespaces"):
            for other in self.registry:
                namespace = old["metadata"]["name"]
                for (ns, name), obj in list(self._objects.get(other.key, {}).items()):
                    if other.namespaced and ns == namespace and self.find(other, ns, name) is obj:
                        self._delete(other, obj, "Background")
        return final

    def _dependents_of(self, owner_uid: str) -> Iterator[tuple[ResourceType, Obj]]:
        for key, ns, name in sorted(self._dependents.get(owner_uid, ())):
            rt = self.registry.by_path(*key)
            obj = self._objects.get(key, {}).get((ns, name))
            refs = (obj or {}).get("metadata", {}).get("ownerReferences") or []
            if rt is not None and obj is not None and any(r.get("uid") == owner_uid for r in refs):
                yield rt, obj

    def _collect(self, owner_uid: str, policy: str) -> None:
        """Delete dependents left without a live owner; unlink the owner from the rest."""
        for rt, dep in list(self._dependents_of(owner_uid)):
            refs = dep["metadata"].get("ownerReferences") or []
            living = [r for r in refs if r.get("uid") != owner_uid and r.get("uid") in self._by_uid]
            if living:
                self._relink(rt, dep, living)
            else:
                self._delete(rt, dep, policy)

    def _orphan(self, owner_uid: str) -> None:
        for rt, dep in list(self._dependents_of(owner_uid)):
            refs = dep["metadata"].get("ownerReferences") or []
            self._relink(rt, dep, [r for r in refs if r.get("uid") != owner_uid])

    def _relink(self, rt: ResourceType, dep: Obj, refs: list[Obj]) -> None:
        new = copy.deepcopy(dep)
        if refs:
            new["metadata"]["ownerReferences"] = refs
        else:
            new["metadata"].pop("ownerReferences", None)
        self._write(rt, dep, new, "MODIFIED")

    def delete_collection(self, rt: ResourceType, namespace: str | None, labels: LabelSelector,
                          fields: FieldSelector | None, options: dict[str, Any] | None = None) -> list[Obj]:
        with self.lock:
            policy = _propagation(options or {})
            return [self._delete(rt, obj, policy)[0]
                    for obj in list(self._matching(rt, namespace, labels, fields))
                    if self.find(rt, namespace or obj["metadata"].get("namespace"), obj["metadata"]["name"]) is obj]


def _propagation(options: dict[str, Any]) -> str:
    policy = options.get("propagationPolicy")
    if policy is None and options.get("orphanDependents") is not None:
        policy = "Orphan" if options["orphanDependents"] else "Background"
    if policy not in (None, "Background", "Foreground", "Orphan"):
        raise errors.bad_request(f"propagationPolicy: Unsupported value: {policy!r}")
    return policy or "Background"
