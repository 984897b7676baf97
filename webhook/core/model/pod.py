"""The parts of a Pod that claim injection reads, as typed dicts as strict as Go's decoder: the
rest (images, env, volumes) is not read, so a large pod costs little more than a small one. A claim
list's ``None`` and ``[]`` are kept apart: a JSON Patch must create one, may append to the other."""

from __future__ import annotations

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import TypedDict  # pydantic reads only this one on Python < 3.12

from webhook.core.model.meta import GoList, GoStr, GoStrMap

GROVE_INIT_CONTAINER = "grove-initc"
"""The init container Grove appends after injection (when ``startsAfter`` is set): no claims."""

_STRICT = ConfigDict(strict=True, extra="ignore")


@with_config(_STRICT)
class PodMeta(TypedDict, total=False):
    name: GoStr
    generateName: GoStr
    namespace: GoStr
    labels: GoStrMap
    annotations: GoStrMap


@with_config(_STRICT)
class ClaimReference(TypedDict, total=False):
    """A container's ``resources.claims[]`` or the pod's ``spec.resourceClaims[]``, by name alone."""

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
    spec: PodSpec | None


read_pod = TypeAdapter(Pod).validate_python
read_pod_header = TypeAdapter(PodHeader).validate_python


def metadata(pod: PodHeader) -> PodMeta:
    return pod.get("metadata") or {}


def claim_names(references: list[ClaimReference] | None) -> list[str]:
    return [r.get("name", "") for r in references or ()]
