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
from typing import Any

import orjson

from webhook.core.model.pod import GROVE_INIT_CONTAINER, Container, Pod, PodSpec, claim_names, metadata

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


def _container(container: Container) -> ContainerClaims:
    resources = container.get("resources")
    return None if resources is None else tuple(claim_names(resources.get("claims")))


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


def claim_operations(pod: Pod, claims: Sequence[str]) -> list[Operation]:
    """Operations adding ``claims`` to the pod and to each of its containers, then init containers.

    ``grove-initc`` among the init containers gets none, as in Grove, where it is added after
    injection. Names already present in a list are not added to that list again.
    """
    unique = list(dict.fromkeys(claims))
    spec = pod.get("spec")
    if not unique:
        return []
    if spec is None:
        values = [{"name": n, "resourceClaimName": n} for n in unique]
        return [{"op": "add", "path": SPEC, "value": {"resourceClaims": values}}, _annotation(pod, unique)]
    operations, added = _spec_operations(spec, unique)
    return [*operations, _annotation(pod, added)] if operations else []


def claim_patch(pod: Pod, claims: Sequence[str]) -> bytes:
    """``claim_operations`` as the JSON a response carries; empty when there is nothing to add."""
    operations = claim_operations(pod, claims)
    return orjson.dumps(operations) if operations else b""


def _spec_operations(spec: PodSpec, claims: list[str]) -> tuple[list[Operation], list[str]]:
    """The operations on the pod's spec, and the names they add to some list (in claim order)."""
    present = tuple(claim_names(spec.get("resourceClaims")))
    new = _new(claims, present)
    operations = _extend(POD_CLAIMS, present, [{"name": n, "resourceClaimName": n} for n in new])
    references = [{"name": n} for n in claims]
    containers = _containers(spec)
    for base, listed in containers:
        operations += _container_operations(listed, base, claims, references)
    added = set(new).union(*(_new(claims, listed or ()) for _, listed in containers))
    return operations, [n for n in claims if n in added]


def _containers(spec: PodSpec) -> list[tuple[str, ContainerClaims]]:
    """Each container that gets the claims, by its JSON Pointer, with the claims it lists: the
    containers, then the init containers but ``grove-initc``."""
    containers = [(f"{CONTAINERS}/{i}", _container(c)) for i, c in enumerate(spec.get("containers", ()))]
    return containers + [
        (f"{INIT_CONTAINERS}/{i}", _container(c))
        for i, c in enumerate(spec.get("initContainers", ()))
        if c.get("name") != GROVE_INIT_CONTAINER
    ]


def _annotation(pod: Pod, added: list[str]) -> Operation:
    """Records ``added`` in the pod's annotation, after the names an earlier pass recorded."""
    annotations = metadata(pod).get("annotations")
    recorded = (annotations.get(CLAIMS_ANNOTATION) or "") if annotations else ""
    value = ",".join(dict.fromkeys([*filter(None, recorded.split(",")), *added]))
    if pod.get("metadata") is None:
        return {"op": "add", "path": METADATA, "value": {"annotations": {CLAIMS_ANNOTATION: value}}}
    if not annotations:
        return {"op": "add", "path": ANNOTATIONS, "value": {CLAIMS_ANNOTATION: value}}
    return {"op": "add", "path": CLAIMS_ANNOTATION_PATH, "value": value}
