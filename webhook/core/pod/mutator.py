"""The mutating webhook for Pods (DECISIONS.md §4): a Grove pod being created gets its shared claims.

Only CREATE of a Grove pod is mutated; every other review is answered after reading no more than
the pod's metadata. A Grove pod is read whole, placed by its labels (BEHAVIOUR.md §5.1), its
PodCliqueSet is looked up in the object store (from memory; one bounded read from the source on a
miss), and the pod gets the claims ``placement.pod_claims`` names as a JSON Patch (``patch``).

Label errors and an unknown PodCliqueSet are denials (code 403, reason Forbidden), like the
validating webhook's: the pod is refused because of what it says, as Grove would refuse to build
it. Code 400 is kept for reviews whose object cannot be read at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from webhook.core.admission import AdmissionRequest, AdmissionResponse, allowed, denied, patched, undecodable
from webhook.core.model import labels
from webhook.core.model.meta import DEFAULT_NAMESPACE, GroupVersionKind, first_problem
from webhook.core.model.pod import PodHeader, metadata, read_pod, read_pod_header
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pod.patch import claim_patch
from webhook.core.sharing.placement import IdentityError, clique_identity, pod_claims, pod_index

POD = GroupVersionKind("", "v1", "Pod")


class PodCliqueSetSource(Protocol):
    """Where PodCliqueSets are found: the object stores."""

    def get(self, namespace: str, name: str) -> PodCliqueSet | None:
        """From memory, at once."""

    async def fetch(self, namespace: str, name: str) -> PodCliqueSet | None:
        """After a ``get`` miss: at most one bounded read from the source."""


def is_grove_pod(pod_labels: Mapping[str, Any]) -> bool:
    return labels.PODCLIQUE in pod_labels and labels.PART_OF in pod_labels


class PodMutator:
    kind = POD
    read = staticmethod(read_pod_header)
    """A review's pods are read no further than their metadata; a Grove pod being created, whole."""

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
        """The claims of the pod its labels place, or the answer when they do not place it (Grove's
        texts, before the PodCliqueSet is looked up) or its PodCliqueSet is not found."""
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
        """A Grove pod whose PodCliqueSet cannot be found: denied, or (``allow``) admitted unchanged."""
        about = f"PodCliqueSet {namespace}/{name} (label {labels.PART_OF} of the pod) not found"
        if self.on_missing_pcs == "allow":
            return allowed([f"{about}: pod admitted without shared ResourceClaims"])
        return denied([f"{about}: the pod's shared ResourceClaims cannot be determined"])
