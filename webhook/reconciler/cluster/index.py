"""Which PodCliqueSet each cached object belongs to, both ways.

Every change to a scaling group, a PodClique or a claim must re-queue its PodCliqueSet, and a
reconcile must find one PodCliqueSet's objects without scanning every object in the namespace.
Grove labels all of them with ``app.kubernetes.io/part-of: <pcs>`` in the PodCliqueSet's
namespace; the index remembers the answer per object, so a deletion (even one found only by a
re-list) still maps to the right key.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from webhook.core.model import labels
from webhook.core.model.meta import ObjectKey


def pcs_key_of(obj: Mapping[str, Any]) -> ObjectKey | None:
    """The PodCliqueSet an object belongs to: its ``part-of`` label, else a PodCliqueSet owner."""
    metadata = obj.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "")
    part_of = (metadata.get("labels") or {}).get(labels.PART_OF)
    if part_of:
        return ObjectKey(namespace, str(part_of))
    for reference in metadata.get("ownerReferences") or []:
        if reference.get("kind") == "PodCliqueSet" and str(reference.get("apiVersion", "")).startswith("grove.io/"):
            return ObjectKey(namespace, str(reference.get("name")))
    return None


class PartOfIndex:
    def __init__(self) -> None:
        self._pcs_of: dict[ObjectKey, ObjectKey] = {}
        self._members: dict[ObjectKey, set[str]] = {}
        self._lock = threading.Lock()
        self._keys: dict[ObjectKey, ObjectKey] = {}
        """One tuple per PodCliqueSet for all its members (there may be 200,000 claims)."""

    def update(self, key: ObjectKey, pcs: ObjectKey | None) -> ObjectKey | None:
        """Record where ``key`` belongs now; returns where it belonged before, if elsewhere."""
        with self._lock:
            previous = self._pcs_of.get(key)
            if previous == pcs:
                return None
            self._unlink(key, previous)
            if pcs is not None:
                pcs = self._keys.setdefault(pcs, pcs)
                self._pcs_of[key] = pcs
                self._members.setdefault(pcs, set()).add(key[1])
            return previous

    def remove(self, key: ObjectKey) -> ObjectKey | None:
        with self._lock:
            previous = self._pcs_of.get(key)
            self._unlink(key, previous)
            return previous

    def _unlink(self, key: ObjectKey, pcs: ObjectKey | None) -> None:
        if pcs is None:
            return
        del self._pcs_of[key]
        members = self._members.get(pcs)
        if members is not None:
            members.discard(key[1])
            if not members:
                del self._members[pcs]
                self._keys.pop(pcs, None)

    def names(self, pcs: ObjectKey, ordered: bool = True) -> list[str]:
        with self._lock:
            members = self._members.get(pcs, ())
            return sorted(members) if ordered else list(members)
