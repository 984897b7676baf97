"""What the reconciler keeps of a ResourceClaim: identity, Grove's labels and its owners, never its
spec.

The claim cache holds a record per shared claim, 200,000 of them for two PodCliques of 100,000
replicas, so a record keeps only what the reconciler reads, in pieces that claims share: Grove's
label keys (no other label is read), split into the labels every claim of one owner has alike
(one shared tuple per owner) and the replica index (the one label that differs from claim to
claim); owner references as one shared tuple per owner. About 600 bytes per claim with the cache
entry, against 2.5 KB for the parsed metadata kept before.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, TypeVar, cast

from webhook.core.boundedcache import BoundedCache
from webhook.core.model import labels as grove
from webhook.core.model.meta import OwnerReference

KEPT_LABELS = frozenset(
    {
        grove.MANAGED_BY,
        grove.PART_OF,
        grove.COMPONENT,
        grove.PCS_REPLICA_INDEX,
        grove.PCSG,
        grove.PCSG_REPLICA_INDEX,
        grove.PODCLIQUE,
        grove.POD_INDEX,
    }
)
"""Every label key the reconciler reads (BEHAVIOUR.md §4.5); other labels are never merged
or compared, so they are not kept."""
INDEX_LABELS = (grove.POD_INDEX, grove.PCSG_REPLICA_INDEX, grove.PCS_REPLICA_INDEX)

_intern = sys.intern

Labels = tuple[tuple[str, str], ...]
"""Labels as sorted (key, value) pairs."""

T = TypeVar("T")
SHARED_KEPT = 65536
_SHARED: BoundedCache[Hashable, Any] = BoundedCache(SHARED_KEPT)


def shared(value: T) -> T:
    """One copy of an equal tuple for every record that holds it (texts are interned). Only the
    most recently used are known: a tuple seen long ago costs sharing, never correctness."""
    found = _SHARED.get(value)
    if found is None:
        _SHARED.put(value, value)
        return value
    return cast(T, found)


def label_shape(labels: Mapping[str, str]) -> tuple[Labels, str | None, str | None]:
    """(the kept labels but the replica index, as shared sorted pairs; the index label; its value)."""
    kept = {k: v for k, v in labels.items() if k in KEPT_LABELS}
    index = next((k for k in INDEX_LABELS if k in kept), None)
    value = kept.pop(index) if index is not None else None
    return shared(tuple(sorted((_intern(k), _intern(v)) for k, v in kept.items()))), index, value


class ClaimRecord:
    __slots__ = ("namespace", "name", "uid", "resource_version", "base_labels", "index_label", "index_value",
                 "references", "deleting")

    def __init__(
        self,
        namespace: str,
        name: str,
        uid: str,
        resource_version: str,
        labels: Mapping[str, str] | None = None,
        owner_references: Sequence[OwnerReference] = (),
        deleting: bool = False,
    ) -> None:
        self.namespace = _intern(namespace)
        self.name = name
        self.uid = uid
        self.resource_version = resource_version
        self.base_labels, self.index_label, self.index_value = label_shape(labels or {})
        self.references: tuple[OwnerReference, ...] = shared(tuple(shared(r) for r in owner_references))
        self.deleting = deleting
        """It has a deletionTimestamp: deleted already, kept by a finalizer until its pods let go."""

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> ClaimRecord:
        metadata = obj.get("metadata") or {}
        labels = metadata.get("labels") or {}
        references = metadata.get("ownerReferences") or []
        if not isinstance(labels, dict) or not isinstance(references, list):
            raise ValueError("metadata.labels or metadata.ownerReferences is malformed")
        namespace, name, uid, version = (_text(metadata, member) for member in ("namespace", "name", "uid", "resourceVersion"))
        return cls(
            namespace,
            name,
            uid,
            version,
            {str(k): str(v) for k, v in labels.items()},
            [OwnerReference.from_api(r) for r in references if isinstance(r, dict)],
            bool(metadata.get("deletionTimestamp")),
        )

    @property
    def labels(self) -> dict[str, str]:
        """Grove's labels on the claim (the only ones kept)."""
        result = dict(self.base_labels)
        if self.index_label is not None and self.index_value is not None:
            result[self.index_label] = self.index_value
        return result

    def __repr__(self) -> str:
        return f"ClaimRecord({self.namespace}/{self.name}, uid={self.uid}, rv={self.resource_version})"


def _text(metadata: Mapping[str, Any], member: str) -> str:
    return str(metadata.get(member) or "")
