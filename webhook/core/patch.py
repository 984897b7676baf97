"""The RFC 6902 JSON Patch that gives a pod its shared claims (resource-sharing.md §5.2, product.md §4).

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

from webhook.core.pod import GROVE_INIT_CONTAINER, Container, Pod

Operation = dict[str, Any]


def escape(token: str) -> str:
    """One JSON Pointer reference token (RFC 6901): ``~`` becomes ``~0``, then ``/`` becomes ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


def pointer(*tokens: str | int) -> str:
    return "".join(f"/{escape(str(t))}" for t in tokens)


def _missing(names: Sequence[str], present: Iterable[str]) -> list[str]:
    """``names`` not in ``present``, each once, in order."""
    seen = set(present)
    result = []
    for name in names:
        if name not in seen:
            seen.add(name)
            result.append(name)
    return result


def _extend(path: str, existing: list[Any] | None, values: list[Any]) -> list[Operation]:
    if not values:
        return []
    if not existing:
        return [{"op": "add", "path": path, "value": values}]
    return [{"op": "add", "path": f"{path}/-", "value": v} for v in values]


def _container_operations(container: Container, base: str, claims: Sequence[str]) -> list[Operation]:
    new = _missing(claims, container.claim_names())
    if not new:
        return []
    values = [{"name": n} for n in new]
    if container.resources is None:
        return [{"op": "add", "path": f"{base}/resources", "value": {"claims": values}}]
    return _extend(f"{base}/resources/claims", container.resources.claims, values)


def claim_patch(pod: Pod, claims: Sequence[str]) -> list[Operation]:
    """Operations adding ``claims`` to the pod and to each of its containers, then init containers.

    ``grove-initc`` among the init containers gets none, as in Grove, where it is added after
    injection. Names already present in a list are not added to that list again.
    """
    spec = pod.spec
    if spec is None:
        new = _missing(claims, ())
        values = [{"name": n, "resourceClaimName": n} for n in new]
        return [{"op": "add", "path": "/spec", "value": {"resourceClaims": values}}] if values else []

    present = [c.name for c in spec.resource_claims or ()]
    pod_values = [{"name": n, "resourceClaimName": n} for n in _missing(claims, present)]
    operations = _extend(pointer("spec", "resourceClaims"), spec.resource_claims, pod_values)
    for index, container in enumerate(spec.containers):
        operations += _container_operations(container, pointer("spec", "containers", index), claims)
    for index, container in enumerate(spec.init_containers):
        if container.name != GROVE_INIT_CONTAINER:
            operations += _container_operations(container, pointer("spec", "initContainers", index), claims)
    return operations
