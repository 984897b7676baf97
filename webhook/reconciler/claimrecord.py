"""What the reconciler keeps of a ResourceClaim: identity, labels and owners, never its spec.

The claim cache may hold thousands of claims; their specs (device requests, and the allocation in
their status) are neither read nor written after creation, so they are not kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ClaimRecord:
    namespace: str
    name: str
    uid: str
    resource_version: str
    labels: Mapping[str, str] = field(default_factory=dict)
    owner_references: tuple[Mapping[str, Any], ...] = ()
    deleting: bool = False
    """It has a deletionTimestamp: deleted already, kept by a finalizer until its pods let go."""

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> ClaimRecord:
        metadata = obj.get("metadata") or {}
        labels = metadata.get("labels") or {}
        references = metadata.get("ownerReferences") or []
        if not isinstance(labels, dict) or not isinstance(references, list):
            raise ValueError("metadata.labels or metadata.ownerReferences is malformed")
        return cls(
            str(metadata.get("namespace") or ""),
            str(metadata.get("name") or ""),
            str(metadata.get("uid") or ""),
            str(metadata.get("resourceVersion") or ""),
            {str(k): str(v) for k, v in labels.items()},
            tuple(r for r in references if isinstance(r, dict)),
            bool(metadata.get("deletionTimestamp")),
        )
