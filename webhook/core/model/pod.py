"""The parts of a Pod that claim injection reads, and nothing more.

The mutating webhook reads a pod's labels to place it (BEHAVIOUR.md §5.1), and its claim lists to
know where the patch must create arrays and which names are already present. Everything else in a
pod (images, env, volumes, affinity) is ignored, so a large pod costs little more than a small one.

A pod is read as typed dicts, checked by pydantic as strictly as Go's decoder reads it (``null``
where Go reads a zero value is read as that value). A member the pod leaves out is absent from its
dict; the readers below give Go's zero value for it.

``None`` and ``[]`` are kept apart where the patch needs them apart: a JSON Patch can append to an
existing array but must create an absent or ``null`` one.
"""

from __future__ import annotations

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import TypedDict  # pydantic reads only this one on Python < 3.12

from webhook.core.model.meta import GoList, GoStr, GoStrMap

GROVE_INIT_CONTAINER = "grove-initc"
"""The init container Grove appends after injection (only when ``startsAfter`` is set); it gets no claims."""

_STRICT = ConfigDict(strict=True, extra="ignore")
"""Go's types, unknown members ignored (never rewritten)."""


@with_config(_STRICT)
class PodMeta(TypedDict, total=False):
    name: GoStr
    generateName: GoStr
    namespace: GoStr
    labels: GoStrMap
    annotations: GoStrMap


@with_config(_STRICT)
class ClaimReference(TypedDict, total=False):
    """``resources.claims[]`` of a container or ``spec.resourceClaims[]`` of the pod: only the name
    matters, the rest is the user's and left alone."""

    name: GoStr


@with_config(_STRICT)
class ResourceRequirements(TypedDict, total=False):
    claims: list[ClaimReference] | None


@with_config(_STRICT)
class Container(TypedDict, total=False):
    name: GoStr
    resources: ResourceRequirements | None


@with_config(_STRICT)
class PodSpec(TypedDict, total=False):
    containers: GoList[Container]
    initContainers: GoList[Container]
    resourceClaims: list[ClaimReference] | None


@with_config(_STRICT)
class PodHeader(TypedDict, total=False):
    """A pod read no further than its metadata: all the webhook reads of a pod it does not mutate."""

    apiVersion: GoStr
    kind: GoStr
    metadata: PodMeta


@with_config(_STRICT)
class Pod(PodHeader, total=False):
    """A ``v1`` Pod, as far as claim injection reads it."""

    spec: PodSpec | None


read_pod = TypeAdapter(Pod).validate_python
"""The pod in parsed JSON; raises pydantic's ``ValidationError`` where Go's decoder would refuse it."""
read_pod_header = TypeAdapter(PodHeader).validate_python
"""The pod read no further than its metadata."""


def metadata(pod: PodHeader) -> PodMeta:
    return pod.get("metadata") or {}


def claim_names(references: list[ClaimReference] | None) -> list[str]:
    return [r.get("name", "") for r in references or ()]
