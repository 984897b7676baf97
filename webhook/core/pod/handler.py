"""The mutating webhook for Pods (DECISIONS.md §4): a Grove pod being created gets its shared claims.

Only CREATE of a Grove pod is mutated; every other review is answered after reading no more than
the pod's labels. A Grove pod is placed by its labels (BEHAVIOUR.md §5.1), its PodCliqueSet is
looked up in the object store (from memory; one bounded read from the source on a miss), and the
pod gets the claims ``podclaims`` names as a JSON Patch.

Label errors and an unknown PodCliqueSet are denials (code 403, reason Forbidden), like the
validating webhook's: the pod is refused because of what it says, as Grove would refuse to build
it. Code 400 is kept for reviews whose object cannot be read at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol

from webhook.core.admission import response
from webhook.core.admission.request import NO_CONTENT, AdmissionRequest, read_objects
from webhook.core.admission.response import AdmissionResponse
from webhook.core.model import labels
from webhook.core.model.meta import DEFAULT_NAMESPACE, GroupVersionKind
from webhook.core.model.pod import Pod, metadata, read_pod, read_pod_header
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pod.patch import patch_json
from webhook.core.sharing.placement import IdentityError, clique_identity, pod_index
from webhook.core.sharing.podclaims import pod_claims

POD = GroupVersionKind("", "v1", "Pod")


class PodCliqueSetSource(Protocol):
    """Where PodCliqueSets are found: the object stores."""

    def get(self, namespace: str, name: str) -> PodCliqueSet | None:
        """From memory, at once."""

    async def fetch(self, namespace: str, name: str) -> PodCliqueSet | None:
        """After a ``get`` miss: at most one bounded read from the source."""


def is_grove_pod(pod_labels: Mapping[str, Any]) -> bool:
    return labels.PODCLIQUE in pod_labels and labels.PART_OF in pod_labels


def _mutated(request: AdmissionRequest) -> bool:
    """Whether the request is a CREATE of a pod with Grove's labels: only then is it read whole."""
    if request.operation != "CREATE":
        return False
    obj = request.object
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    pod_labels = meta.get("labels") if isinstance(meta, dict) else None
    return isinstance(pod_labels, dict) and is_grove_pod(pod_labels)


class PodMutator:
    kind = POD

    def __init__(self, store: PodCliqueSetSource, on_missing_pcs: Literal["deny", "allow"] = "deny") -> None:
        self.store = store
        self.on_missing_pcs = on_missing_pcs
        """Whether a Grove pod whose PodCliqueSet cannot be found is refused or admitted unchanged."""

    async def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        if not _mutated(request):
            header = read_objects(request, read_pod_header, POD)
            if isinstance(header, AdmissionResponse):
                return header
            if request.operation == "CREATE" and header[0] is None:
                return response.errored(400, f"{NO_CONTENT}: request.object is missing")
            return response.allowed()
        objects = read_objects(request, read_pod, POD)
        if isinstance(objects, AdmissionResponse):
            return objects
        pod = objects[0]
        assert pod is not None  # _mutated read its labels
        return await self.mutate(request, pod)

    async def mutate(self, request: AdmissionRequest, pod: Pod) -> AdmissionResponse:
        """A Grove pod being created. The API server always sends ``request.namespace`` for a pod; a
        review written by hand may leave both it and the pod's namespace out, and then means
        ``default``, as ``kubectl`` would."""
        meta = metadata(pod)
        namespace = request.namespace or meta.get("namespace") or DEFAULT_NAMESPACE
        pod_labels = meta.get("labels") or {}
        pcs_name = pod_labels[labels.PART_OF]
        pod_key = f"{namespace}/{meta.get('name') or meta.get('generateName', '')}"
        try:
            identity = clique_identity(namespace, pcs_name, pod_labels[labels.PODCLIQUE], pod_labels)
            pcs = self.store.get(namespace, pcs_name) or await self.store.fetch(namespace, pcs_name)
            if pcs is None:
                return self.missing(namespace, pcs_name)
            claims = pod_claims(pcs, identity, lambda: pod_index(pod_labels, pod_key))
        except IdentityError as err:
            return response.denied(str(err))
        patch = patch_json(pod, claims)
        return response.patched(patch) if patch else response.allowed()

    def missing(self, namespace: str, name: str) -> AdmissionResponse:
        """A Grove pod whose PodCliqueSet cannot be found: denied, or (``allow``) admitted unchanged."""
        about = f"PodCliqueSet {namespace}/{name} (label {labels.PART_OF} of the pod) not found"
        if self.on_missing_pcs == "allow":
            return response.allowed([f"{about}: pod admitted without shared ResourceClaims"])
        return response.denied(f"{about}: the pod's shared ResourceClaims cannot be determined")
