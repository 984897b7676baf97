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

from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
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
        return [{"op": "add", "path": pointer("spec"), "value": {"resourceClaims": values}}, _annotation(pod, unique)]

    existing = spec.get("resourceClaims")
    new = _new(unique, claim_names(existing)) if existing else unique
    operations = _extend(POD_CLAIMS, existing, [{"name": n, "resourceClaimName": n} for n in new])
    references = [{"name": n} for n in unique]
    for index, container in enumerate(spec.get("containers", ())):
        operations += _container_operations(container, f"{CONTAINERS}/{index}", unique, references)
    for index, container in enumerate(spec.get("initContainers", ())):
        if container.get("name") != GROVE_INIT_CONTAINER:
            operations += _container_operations(container, f"{INIT_CONTAINERS}/{index}", unique, references)
    return [*operations, _annotation(pod, _added(spec, unique, new))] if operations else []


def _added(spec: PodSpec, claims: list[str], new: list[str]) -> list[str]:
    """The names of ``claims`` the patch adds to the pod's list or to some container's."""
    added = set(new)
    containers = [*spec.get("containers", ()), *(c for c in spec.get("initContainers", ()) if c.get("name") != GROVE_INIT_CONTAINER)]
    for container in containers:
        resources = container.get("resources")
        added.update(_new(claims, claim_names(resources.get("claims")) if resources else ()))
    return [n for n in claims if n in added]


def _annotation(pod: Pod, added: list[str]) -> Operation:
    """Records ``added`` in the pod's annotation, after the names an earlier pass recorded."""
    annotations = metadata(pod).get("annotations")
    recorded = annotations.get(CLAIMS_ANNOTATION, "") if annotations else ""
    value = ",".join(dict.fromkeys([*filter(None, recorded.split(",")), *added]))
    if pod.get("metadata") is None:
        return {"op": "add", "path": pointer("metadata"), "value": {"annotations": {CLAIMS_ANNOTATION: value}}}
    if not annotations:
        return {"op": "add", "path": pointer("metadata", "annotations"), "value": {CLAIMS_ANNOTATION: value}}
    return {"op": "add", "path": pointer("metadata", "annotations", CLAIMS_ANNOTATION), "value": value}


def _container_shape(container: Container) -> tuple[str, ...] | None:
    resources = container.get("resources")
    return None if resources is None else tuple(claim_names(resources.get("claims")))


def _shape(pod: Pod) -> Hashable:
    """All of a pod that its patch depends on: which lists exist, the names they hold, which init
    containers are Grove's, and whether it has annotations and the names one records."""
    annotations = metadata(pod).get("annotations")
    recorded = (bool(annotations), annotations.get(CLAIMS_ANNOTATION) if annotations else None)
    spec = pod.get("spec")
    if spec is None:
        return recorded
    return (
        recorded,
        tuple(claim_names(spec.get("resourceClaims"))),
        tuple([_container_shape(c) for c in spec.get("containers", ())]),
        tuple([
            "" if c.get("name") == GROVE_INIT_CONTAINER else _container_shape(c) for c in spec.get("initContainers", ())
        ]),
    )


class ClaimPatches:
    """``claim_patch`` as JSON, remembered by (claims, pod shape) for the pods that share claims.

    The pods of one PodClique come from one template, and unless a clique-level PerReplica entry
    tells them apart they get the same claims: a scale-out's pods are patched once, then looked up
    (about 1.5 µs rather than 5 for Grove's pod). Pods told apart are patched each time, as looking
    them up would cost more than it saves. The ``size`` most recently used patches of at most
    ``largest`` bytes are kept (a pod of thousands of containers is patched each time), so the
    cache holds a few megabytes at most, whatever pods are sent.
    """

    def __init__(self, size: int = 1024, largest: int = 16 * 1024) -> None:
        self.size = size
        self.largest = largest
        self._found: OrderedDict[tuple[tuple[str, ...], Hashable], bytes] = OrderedDict()

    def patch(self, pod: Pod, claims: Sequence[str], shared: bool) -> bytes:
        """The patch as JSON, empty when there is nothing to add; ``shared``: other pods get the
        same ``claims``."""
        if not shared:
            return _json(claim_patch(pod, claims))
        key = (tuple(claims), _shape(pod))
        found = self._found.get(key)
        if found is not None:
            self._found.move_to_end(key)
            return found
        found = _json(claim_patch(pod, claims))
        if len(found) <= self.largest:
            self._found[key] = found
            if len(self._found) > self.size:
                self._found.popitem(last=False)
        return found


def _json(operations: list[Operation]) -> bytes:
    return orjson.dumps(operations) if operations else b""
