"""The RFC 6902 JSON Patch that gives a pod its shared claims (BEHAVIOUR.md §5.2, DECISIONS.md §4).

Grove appends each claim to ``spec.resourceClaims`` and to ``resources.claims`` of every container
and init container while it builds the pod. A webhook sees the pod instead, possibly a second time
(``reinvocationPolicy: IfNeeded``) or with claims already present, so unlike Grove the patch skips a
name its target list already holds: a second pass over a patched pod yields no operation.

An absent, ``null`` or empty list is written whole with one ``add`` (``add`` on an existing member
replaces it); a non-empty one is appended to with ``/-``. The end state is Grove's: each list in
the order it had, followed by the new names in claim order.

A pod that gets a claim is also annotated ``resource-sharing.grove.io/claims`` with the names the
webhook added (to those an earlier pass recorded), as Kyverno records its patches: on-call can tell
them from the claims Grove's operator wrote into the pod itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

import msgspec
import orjson

from webhook.core.model.pod import GROVE_INIT_CONTAINER, Container, Pod, claim_names, metadata

Operation = dict[str, Any]

CLAIMS_ANNOTATION = "resource-sharing.grove.io/claims"
"""The claims the webhook added to the pod, comma-separated in claim order."""


def escape(token: str) -> str:
    """One JSON Pointer reference token (RFC 6901): ``~`` becomes ``~0``, then ``/`` becomes ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


def pointer(*tokens: str | int) -> str:
    return "".join(f"/{t}" if isinstance(t, int) else f"/{escape(t)}" for t in tokens)


SPEC = pointer("spec")
POD_CLAIMS = pointer("spec", "resourceClaims")
CONTAINERS = pointer("spec", "containers")
INIT_CONTAINERS = pointer("spec", "initContainers")
METADATA = pointer("metadata")
ANNOTATIONS = pointer("metadata", "annotations")
CLAIMS_ANNOTATION_PATH = pointer("metadata", "annotations", CLAIMS_ANNOTATION)


ContainerClaims = tuple[str, ...] | None
"""The claim names a container lists (empty: a ``resources`` without claims), or None when it has no
``resources``."""
GROVE_INIT: Literal["grove-initc"] = "grove-initc"
"""Grove's own init container in a shape: it gets no claims."""


class PodShape(msgspec.Struct, frozen=True, gc=False):
    """All of a pod its patch depends on: which claim lists exist and the names they hold; the
    containers in order; the init containers in order, Grove's own (which gets no claims) marked.
    The pods of one template have one shape."""

    claims: tuple[str, ...] | None
    """``spec.resourceClaims`` names (empty when absent or empty), None when the pod has no spec."""
    containers: tuple[ContainerClaims, ...] = ()
    init_containers: tuple[ContainerClaims | Literal["grove-initc"], ...] = ()
    annotations: bool | None = None
    """Whether the pod has annotations (None: it has no ``metadata``)."""
    recorded: str = ""
    """The names an earlier pass recorded in ``CLAIMS_ANNOTATION``."""


def _container(container: Container) -> ContainerClaims:
    resources = container.get("resources")
    return None if resources is None else tuple(claim_names(resources.get("claims")))


def shape_of(pod: Pod) -> PodShape:
    spec = pod.get("spec")
    annotations = metadata(pod).get("annotations")
    has = None if pod.get("metadata") is None else bool(annotations)
    recorded = (annotations.get(CLAIMS_ANNOTATION) or "") if annotations else ""
    if spec is None:
        return PodShape(None, annotations=has, recorded=recorded)
    return PodShape(
        tuple(claim_names(spec.get("resourceClaims"))),
        tuple([_container(c) for c in spec.get("containers", ())]),
        tuple([GROVE_INIT if c.get("name") == GROVE_INIT_CONTAINER else _container(c) for c in spec.get("initContainers", ())]),
        has,
        recorded,
    )


def _new(claims: list[str], present: Iterable[str]) -> list[str]:
    """``claims`` (already free of duplicates) without the names ``present``."""
    seen = set(present)
    return [n for n in claims if n not in seen] if seen else claims


def _extend(path: str, existing: tuple[str, ...], values: list[Any]) -> list[Operation]:
    if not values:
        return []
    if not existing:
        return [{"op": "add", "path": path, "value": values}]
    return [{"op": "add", "path": f"{path}/-", "value": v} for v in values]


def _container_operations(present: ContainerClaims, base: str, claims: list[str], references: list[Any]) -> list[Operation]:
    """``references`` are ``claims`` as container claim entries, shared by every container that
    lacks all of them (the usual case: no claims yet, one operation) so they are built once."""
    if present is None:
        return [{"op": "add", "path": f"{base}/resources", "value": {"claims": references}}]
    if not present:
        return [{"op": "add", "path": f"{base}/resources/claims", "value": references}]
    new = _new(claims, present)
    return _extend(f"{base}/resources/claims", present, references if new is claims else [{"name": n} for n in new])


def claim_patch(shape: PodShape, claims: Sequence[str]) -> list[Operation]:
    """Operations adding ``claims`` to a pod of ``shape`` and to each of its containers, then init
    containers.

    ``grove-initc`` among the init containers gets none, as in Grove, where it is added after
    injection. Names already present in a list are not added to that list again.
    """
    unique = list(dict.fromkeys(claims))
    if not unique:
        return []
    if shape.claims is None:
        values = [{"name": n, "resourceClaimName": n} for n in unique]
        return [{"op": "add", "path": SPEC, "value": {"resourceClaims": values}}, _annotation(shape, unique)]
    new = _new(unique, shape.claims)
    operations = _extend(POD_CLAIMS, shape.claims, [{"name": n, "resourceClaimName": n} for n in new])
    references = [{"name": n} for n in unique]
    for index, present in enumerate(shape.containers):
        operations += _container_operations(present, f"{CONTAINERS}/{index}", unique, references)
    for index, init in enumerate(shape.init_containers):
        if not isinstance(init, str):
            operations += _container_operations(init, f"{INIT_CONTAINERS}/{index}", unique, references)
    return [*operations, _annotation(shape, _added(shape, unique, new))] if operations else []


def _added(shape: PodShape, claims: list[str], new: list[str]) -> list[str]:
    """The names of ``claims`` the patch adds to the pod's list or to some container's."""
    if len(new) == len(claims):  # the pod's list lacked them all (the usual pod)
        return claims
    added = set(new)
    for present in (*shape.containers, *shape.init_containers):
        if not isinstance(present, str):
            added.update(_new(claims, present or ()))
    return [n for n in claims if n in added]


def _annotation(shape: PodShape, added: list[str]) -> Operation:
    """Records ``added`` in the pod's annotation, after the names an earlier pass recorded."""
    recorded = shape.recorded
    value = ",".join(dict.fromkeys([*filter(None, recorded.split(",")), *added])) if recorded else ",".join(added)
    if shape.annotations is None:
        return {"op": "add", "path": METADATA, "value": {"annotations": {CLAIMS_ANNOTATION: value}}}
    if not shape.annotations:
        return {"op": "add", "path": ANNOTATIONS, "value": {CLAIMS_ANNOTATION: value}}
    return {"op": "add", "path": CLAIMS_ANNOTATION_PATH, "value": value}


class PatchInput(msgspec.Struct, frozen=True, gc=False):
    shape: PodShape
    claims: tuple[str, ...]


def patch_json(patching: PatchInput) -> bytes:
    """``claim_patch`` as the JSON a response carries; empty when there is nothing to add."""
    operations = claim_patch(patching.shape, patching.claims)
    return orjson.dumps(operations) if operations else b""
