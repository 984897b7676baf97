"""The RFC 6902 JSON Patch that gives a pod its shared claims (BEHAVIOUR.md §5.2, DECISIONS.md §4).

Grove appends each claim to ``spec.resourceClaims`` and to ``resources.claims`` of every container
and init container while it builds the pod. A webhook sees the pod instead, possibly a second time
(``reinvocationPolicy: IfNeeded``) or with claims already present, so unlike Grove the patch skips a
name its target list already holds: a second pass over a patched pod yields no operation.

An absent, ``null`` or empty list is written whole with one ``add`` (``add`` on an existing member
replaces it); a non-empty one is appended to with ``/-``. The end state is Grove's: each list in
the order it had, followed by the new names in claim order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from webhook.core.model.pod import GROVE_INIT_CONTAINER, Container, Pod, claim_names

Operation = dict[str, Any]


def escape(token: str) -> str:
    """One JSON Pointer reference token (RFC 6901): ``~`` becomes ``~0``, then ``/`` becomes ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


def pointer(*tokens: str | int) -> str:
    return "".join(f"/{t}" if isinstance(t, int) else f"/{escape(t)}" for t in tokens)


POD_CLAIMS = pointer("spec", "resourceClaims")
CONTAINERS = pointer("spec", "containers")
INIT_CONTAINERS = pointer("spec", "initContainers")


def _new(claims: list[str], present: Iterable[str]) -> list[str]:
    """``claims`` (already free of duplicates) without the names ``present``."""
    seen = set(present)
    return [n for n in claims if n not in seen] if seen else claims


def _extend(path: str, existing: list[Any] | None, values: list[Any]) -> list[Operation]:
    if not values:
        return []
    if not existing:
        return [{"op": "add", "path": path, "value": values}]
    return [{"op": "add", "path": f"{path}/-", "value": v} for v in values]


def _container_operations(container: Container, base: str, claims: list[str], references: list[Any]) -> list[Operation]:
    """``references`` are ``claims`` as container claim entries, shared by every container that
    lacks all of them (the usual case: no claims yet, one operation) so they are built once."""
    resources = container.get("resources")
    if resources is None:
        return [{"op": "add", "path": f"{base}/resources", "value": {"claims": references}}]
    present = resources.get("claims")
    if not present:
        return [{"op": "add", "path": f"{base}/resources/claims", "value": references}]
    new = _new(claims, claim_names(present))
    return _extend(f"{base}/resources/claims", present, references if new is claims else [{"name": n} for n in new])


def claim_patch(pod: Pod, claims: Sequence[str]) -> list[Operation]:
    """Operations adding ``claims`` to the pod and to each of its containers, then init containers.

    ``grove-initc`` among the init containers gets none, as in Grove, where it is added after
    injection. Names already present in a list are not added to that list again.
    """
    unique = list(dict.fromkeys(claims))
    if not unique:
        return []
    spec = pod.get("spec")
    if spec is None:
        values = [{"name": n, "resourceClaimName": n} for n in unique]
        return [{"op": "add", "path": pointer("spec"), "value": {"resourceClaims": values}}]

    existing = spec.get("resourceClaims")
    new = _new(unique, claim_names(existing)) if existing else unique
    operations = _extend(POD_CLAIMS, existing, [{"name": n, "resourceClaimName": n} for n in new])
    references = [{"name": n} for n in unique]
    for index, container in enumerate(spec.get("containers", ())):
        operations += _container_operations(container, f"{CONTAINERS}/{index}", unique, references)
    for index, container in enumerate(spec.get("initContainers", ())):
        if container.get("name") != GROVE_INIT_CONTAINER:
            operations += _container_operations(container, f"{INIT_CONTAINERS}/{index}", unique, references)
    return operations


def patch_json(pod: Pod, claims: Sequence[str]) -> bytes:
    """``claim_patch`` as the JSON a response carries; empty when there is nothing to add."""
    operations = claim_patch(pod, claims)
    return orjson.dumps(operations) if operations else b""
