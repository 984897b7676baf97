"""The parts of a Pod that claim injection reads, and nothing more.

The mutating webhook reads a pod's labels to place it (BEHAVIOUR.md §5.1), and its claim lists to
know where the patch must create arrays and which names are already present. Everything else in a
pod (images, env, volumes, affinity) is ignored, so a large pod costs little more than a small one.

A pod is read on every pod creation in the cluster, so it is read as typed dicts rather than
models. The usual pod, every member read here of the type it should be, is checked where it lies
and the parsed JSON is used as it is; anything unusual (``null`` where Go reads a zero value,
another type) goes through pydantic, which checks the same typed dicts as strictly and gives Go's
refusal. A member the pod leaves out is absent from its dict; the readers below give Go's zero value
for it.

``None`` and ``[]`` are kept apart where the patch needs them apart: a JSON Patch can append to an
existing array but must create an absent or ``null`` one.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import TypedDict  # pydantic reads only this one on Python < 3.12

from webhook.core.model.meta import GoList, GoStr, GoStrMap, Unusual

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


_read_pod = TypeAdapter(Pod).validate_python
_read_pod_header = TypeAdapter(PodHeader).validate_python


def read_pod(obj: Any) -> Pod:
    """The pod in ``obj``; raises pydantic's ``ValidationError`` where Go's decoder would refuse it."""
    try:
        _check_header(obj)
        _check_spec(obj.get("spec"))
    except Unusual:
        return _read_pod(obj)
    return cast(Pod, obj)


def read_pod_header(obj: Any) -> PodHeader:
    """The pod in ``obj``, read no further than its metadata."""
    try:
        _check_header(obj)
    except Unusual:
        return _read_pod_header(obj)
    return cast(PodHeader, obj)


def _text(value: Any) -> None:
    """Text as it is: ``null`` too is unusual, as pydantic would read it as ""."""
    if type(value) is not str:
        raise Unusual


def _check_header(obj: Any) -> None:
    if type(obj) is not dict:
        raise Unusual
    for member in ("apiVersion", "kind"):
        if member in obj:
            _text(obj[member])
    if "metadata" in obj:
        _check_metadata(obj["metadata"])


def _check_metadata(meta: Any) -> None:
    if type(meta) is not dict:
        raise Unusual
    for member in ("name", "generateName", "namespace"):
        if member in meta:
            _text(meta[member])
    for member in ("labels", "annotations"):
        if member in meta:
            values = meta[member]
            if type(values) is not dict or not all(type(v) is str for v in values.values()):
                raise Unusual


def _check_spec(spec: Any) -> None:
    if spec is None:
        return
    if type(spec) is not dict:
        raise Unusual
    for member in ("containers", "initContainers"):
        if member in spec:
            containers = spec[member]
            if type(containers) is not list:
                raise Unusual
            for container in containers:
                _check_container(container)
    _check_references(spec.get("resourceClaims"))


def _check_container(container: Any) -> None:
    if type(container) is not dict:
        raise Unusual
    if "name" in container:
        _text(container["name"])
    resources = container.get("resources")
    if resources is not None:
        if type(resources) is not dict:
            raise Unusual
        _check_references(resources.get("claims"))


def _check_references(references: Any) -> None:
    """A claim list: absent or ``null`` (kept apart from ``[]`` by the patch), or objects whose
    ``name``, when present, is text."""
    if references is None:
        return
    if type(references) is not list:
        raise Unusual
    for reference in references:
        if type(reference) is not dict or ("name" in reference and type(reference["name"]) is not str):
            raise Unusual



def metadata(pod: PodHeader) -> PodMeta:
    return pod.get("metadata") or {}


def claim_names(references: list[ClaimReference] | None) -> list[str]:
    """The names of a list of claim references; most lists a pod review reads are absent or empty,
    which are answered without a comprehension (on Python 3.11 a call of its own)."""
    if not references:
        return []
    return [r.get("name", "") for r in references]
