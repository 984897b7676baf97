"""The mutating webhook for Pods (DECISIONS.md §4): a Grove pod being created gets its shared claims
as a JSON Patch (BEHAVIOUR.md §5.2); label errors and an unknown PodCliqueSet are denials (code
403), as Grove would refuse to build the pod. Unlike Grove, a name a list already holds is skipped,
as a webhook may see a pod twice (``reinvocationPolicy: IfNeeded``); the names added are recorded in
an annotation, as Kyverno records its patches, to tell them from those Grove's operator wrote."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

import orjson
from pydantic import ValidationError

from webhook.core.admission import AdmissionRequest, AdmissionResponse, allowed, denied, patched, undecodable
from webhook.core.model import labels
from webhook.core.model.meta import DEFAULT_NAMESPACE, GroupVersionKind, first_problem
from webhook.core.model.pod import (
    GROVE_INIT_CONTAINER, Container, Pod, PodHeader, PodSpec, claim_names, metadata, read_pod, read_pod_header,
)
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.sharing.placement import IdentityError, clique_identity, pod_claims, pod_index

POD = GroupVersionKind("", "v1", "Pod")
CLAIMS_ANNOTATION = "resource-sharing.grove.io/claims"
"""The claims the webhook added to the pod, comma-separated in claim order, after earlier passes'."""
Operation = dict[str, Any]
ContainerClaims = tuple[str, ...] | None
"""The claim names a container lists, or None when it has no ``resources``."""


class PodCliqueSetSource(Protocol):
    def get(self, namespace: str, name: str) -> PodCliqueSet | None: ...

    async def fetch(self, namespace: str, name: str) -> PodCliqueSet | None:
        """After a ``get`` miss: at most one bounded read from the source."""


def is_grove_pod(pod_labels: Mapping[str, Any]) -> bool:
    return labels.PODCLIQUE in pod_labels and labels.PART_OF in pod_labels


class PodMutator:
    kind = POD
    read = staticmethod(read_pod_header)
    """No further than the metadata: a Grove pod being created is read whole in ``default``."""

    def __init__(self, store: PodCliqueSetSource, on_missing_pcs: Literal["deny", "allow"] = "deny") -> None:
        self.store = store
        self.on_missing_pcs = on_missing_pcs
        """Whether a Grove pod whose PodCliqueSet cannot be found is refused or admitted unchanged."""

    async def default(self, request: AdmissionRequest, header: PodHeader) -> AdmissionResponse:
        meta = metadata(header)
        pod_labels = meta.get("labels") or {}
        if request.operation != "CREATE" or not is_grove_pod(pod_labels):
            return allowed()
        try:
            pod = read_pod(request.object)
        except ValidationError as err:
            return undecodable("object", POD, first_problem(err))
        # The API server always sends ``request.namespace`` for a pod; a review written by hand may
        # leave both it and the pod's namespace out, and then means ``default``, as kubectl would.
        namespace = request.namespace or meta.get("namespace") or DEFAULT_NAMESPACE
        claims = await self.claims(namespace, f"{namespace}/{meta.get('name') or meta.get('generateName', '')}", pod_labels)
        if isinstance(claims, AdmissionResponse):
            return claims
        patch = claim_patch(pod, claims)
        return patched(patch, note=f"shared claims {', '.join(claims)}") if patch else allowed()

    async def claims(self, namespace: str, pod_key: str, pod_labels: Mapping[str, str]) -> list[str] | AdmissionResponse:
        """Its claims, or the answer if its labels do not place it or its PodCliqueSet is gone."""
        pcs_name = pod_labels[labels.PART_OF]
        try:
            identity = clique_identity(namespace, pcs_name, pod_labels[labels.PODCLIQUE], pod_labels)
            pcs = self.store.get(namespace, pcs_name) or await self.store.fetch(namespace, pcs_name)
            if pcs is None:
                return self.missing(namespace, pcs_name)
            return pod_claims(pcs, identity, lambda: pod_index(pod_labels, pod_key))
        except IdentityError as err:
            return denied([err])

    def missing(self, namespace: str, name: str) -> AdmissionResponse:
        about = f"PodCliqueSet {namespace}/{name} (label {labels.PART_OF} of the pod) not found"
        if self.on_missing_pcs == "allow":
            return allowed([f"{about}: pod admitted without shared ResourceClaims"])
        return denied([f"{about}: the pod's shared ResourceClaims cannot be determined"])


SPEC = "/spec"
POD_CLAIMS = "/spec/resourceClaims"
CONTAINERS = "/spec/containers"
INIT_CONTAINERS = "/spec/initContainers"
METADATA = "/metadata"
ANNOTATIONS = "/metadata/annotations"
CLAIMS_ANNOTATION_PATH = ANNOTATIONS + "/" + CLAIMS_ANNOTATION.replace("/", "~1")
"""A JSON Pointer (RFC 6901): the ``/`` in the annotation's name is written ``~1``."""


def _container(container: Container) -> ContainerClaims:
    resources = container.get("resources")
    return None if resources is None else tuple(claim_names(resources.get("claims")))


def _new(claims: list[str], present: Iterable[str]) -> list[str]:
    """``claims`` (already free of duplicates) without the names ``present``."""
    seen = set(present)
    return [n for n in claims if n not in seen] if seen else claims


def _extend(path: str, existing: tuple[str, ...], values: list[Any]) -> list[Operation]:
    """An absent, ``null`` or empty list is written whole with one ``add``; another appended to."""
    if not values:
        return []
    if not existing:
        return [{"op": "add", "path": path, "value": values}]
    return [{"op": "add", "path": f"{path}/-", "value": v} for v in values]


def _container_operations(present: ContainerClaims, base: str, claims: list[str], references: list[Any]) -> list[Operation]:
    """``references``, ``claims`` as entries, are made once for all containers lacking them all."""
    if present is None:
        return [{"op": "add", "path": f"{base}/resources", "value": {"claims": references}}]
    if not present:
        return [{"op": "add", "path": f"{base}/resources/claims", "value": references}]
    new = _new(claims, present)
    return _extend(f"{base}/resources/claims", present, references if new is claims else [{"name": n} for n in new])


def claim_operations(pod: Pod, claims: Sequence[str]) -> list[Operation]:
    """Operations adding ``claims`` to the pod and its containers, recorded in the annotation."""
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
    """Each container but ``grove-initc`` (added later) by JSON Pointer, with its claims."""
    containers = [(f"{CONTAINERS}/{i}", _container(c)) for i, c in enumerate(spec.get("containers", ()))]
    return containers + [
        (f"{INIT_CONTAINERS}/{i}", _container(c))
        for i, c in enumerate(spec.get("initContainers", ()))
        if c.get("name") != GROVE_INIT_CONTAINER
    ]


def _annotation(pod: Pod, added: list[str]) -> Operation:
    annotations = metadata(pod).get("annotations")
    recorded = (annotations.get(CLAIMS_ANNOTATION) or "") if annotations else ""
    value = ",".join(dict.fromkeys([*filter(None, recorded.split(",")), *added]))
    if pod.get("metadata") is None:
        return {"op": "add", "path": METADATA, "value": {"annotations": {CLAIMS_ANNOTATION: value}}}
    if not annotations:
        return {"op": "add", "path": ANNOTATIONS, "value": {CLAIMS_ANNOTATION: value}}
    return {"op": "add", "path": CLAIMS_ANNOTATION_PATH, "value": value}
