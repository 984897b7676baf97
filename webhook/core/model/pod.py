"""The parts of a Pod that claim injection reads, and nothing more.

The mutating webhook reads a pod's labels to place it (BEHAVIOUR.md §5.1), and its claim lists to
know where the patch must create arrays and which names are already present. Everything else in a
pod (images, env, volumes, affinity) is ignored, so a large pod costs little more than a small one.

A pod is read on every pod creation in the cluster, so it is read as typed dicts rather than
models. The usual pod, every member the webhook reads of the type Go gives it and none ``null``,
is taken as it was parsed (its other members are never looked at); any other is read through
pydantic, which checks as strictly (Go's types, ``null`` as the zero value) and words what Go's
decoder would refuse. A member the pod leaves out is absent from its dict; the readers below give
Go's zero value for it.

``None`` and ``[]`` are kept apart where the patch needs them apart: a JSON Patch can append to an
existing array but must create an absent or ``null`` one.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import TypedDict  # pydantic reads only this one on Python < 3.12

from webhook.core.model.meta import GoList, GoStr, GoStrMap

GROVE_INIT_CONTAINER = "grove-initc"
"""The init container Grove appends after injection (only when ``startsAfter`` is set); it gets no claims."""

_STRICT = ConfigDict(strict=True, extra="ignore")
"""As ``KubeModel``: Go's types, unknown members ignored (never rewritten)."""


@with_config(_STRICT)
class PodMeta(TypedDict, total=False):
    name: GoStr
    generateName: GoStr
    namespace: GoStr
    labels: GoStrMap


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


_checked_pod = TypeAdapter(Pod).validate_python
_checked_header = TypeAdapter(PodHeader).validate_python


def read_pod(raw: Any) -> Pod:
    """The pod as claim injection reads it; raises pydantic's ``ValidationError`` where Go's decoder
    would refuse it."""
    return cast(Pod, raw) if _usual_header(raw) and _usual_spec(raw.get("spec")) else _checked_pod(raw)


def read_pod_header(raw: Any) -> PodHeader:
    """The pod read no further than its metadata."""
    return cast(PodHeader, raw) if _usual_header(raw) else _checked_header(raw)


def _texts(value: dict[str, Any], *names: str) -> bool:
    """Whether each member named is absent or text."""
    return all(type(value.get(name, "")) is str for name in names)


def _usual_header(raw: Any) -> bool:
    if type(raw) is not dict or not _texts(raw, "apiVersion", "kind"):
        return False
    meta = raw.get("metadata", _NO_MEMBERS)
    if type(meta) is not dict or not _texts(meta, "name", "generateName", "namespace"):
        return False
    pod_labels = meta.get("labels", _NO_MEMBERS)
    return type(pod_labels) is dict and all(type(v) is str for v in pod_labels.values())


_NO_MEMBERS: dict[str, Any] = {}


def _usual_claims(value: Any) -> bool:
    """``resourceClaims`` or ``resources.claims``: absent, ``null``, or references named by text."""
    return value is None or (type(value) is list and all(type(r) is dict and _texts(r, "name") for r in value))


def _usual_container(container: Any) -> bool:
    if type(container) is not dict or not _texts(container, "name"):
        return False
    resources = container.get("resources")
    return resources is None or (type(resources) is dict and _usual_claims(resources.get("claims")))


def _usual_containers(value: Any) -> bool:
    """``containers`` or ``initContainers``: absent, or a list (``null`` reads as empty: unusual)."""
    return value is _NO_MEMBERS or (type(value) is list and all(_usual_container(c) for c in value))


def _usual_spec(spec: Any) -> bool:
    if spec is None:
        return True
    if type(spec) is not dict or not _usual_claims(spec.get("resourceClaims")):
        return False
    return _usual_containers(spec.get("containers", _NO_MEMBERS)) and _usual_containers(spec.get("initContainers", _NO_MEMBERS))


def metadata(pod: PodHeader) -> PodMeta:
    return pod.get("metadata") or {}


def claim_names(references: list[ClaimReference] | None) -> list[str]:
    return [r.get("name", "") for r in references or ()]
