"""The mutating webhook for Pods (DECISIONS.md §4): a Grove pod being created gets its shared claims.

Only CREATE of a Grove pod is mutated; every other review is answered after reading no more than
the pod's labels. A Grove pod is placed by its labels (BEHAVIOUR.md §5.1), its PodCliqueSet is
looked up in the object store (from memory; one bounded read from the source on a miss), and the
pod gets the claims ``podclaims`` names as a JSON Patch.

Every pod of a PodClique is placed alike and gets the same claims but its own index's, and the
pods of one template have one shape: the mutator remembers where the last ``PLACEMENTS`` label sets
place a pod, the claims of the last ``PODCLIQUES`` PodCliques of each of the last
``PODCLIQUESETS`` PodCliqueSets the store gave it (as long as the store gives the same, unchanged),
and the last ``PATCHES`` patches of pods that share their claims.

Label errors and an unknown PodCliqueSet are denials (code 403, reason Forbidden), like the
validating webhook's: the pod is refused because of what it says, as Grove would refuse to build
it. Code 400 is kept for reviews whose object cannot be read at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, Literal, Protocol, cast

from webhook.core.admission import response
from webhook.core.admission.envelope import envelope
from webhook.core.admission.request import NO_CONTENT, AdmissionRequest, read_objects
from webhook.core.admission.response import AdmissionResponse
from webhook.core.boundedcache import Memo
from webhook.core.model import labels
from webhook.core.model.meta import DEFAULT_NAMESPACE, GroupVersionKind
from webhook.core.model.pod import Pod, PodMeta, metadata, read_pod, read_pod_header
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pod.patch import PatchInput, patch_json, shape_of
from webhook.core.sharing.placement import CliqueIdentity, IdentityError, Placement, place, pod_index

from webhook.core.sharing.podclaims import PodCliqueClaims, podclique_claims

POD = GroupVersionKind("", "v1", "Pod")
PLACEMENTS = 4096
PODCLIQUESETS = 1024
PODCLIQUES = 32
PATCHES = 1024
LARGEST_PATCH = 256
"""Claims times containers in a patch remembered, at most."""


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


def _as_decoded(obj: Any) -> Pod:
    """A pod decoded into ``Pod``'s shape (``objects``): every member read is of its type already."""
    return cast(Pod, obj)


def _pod_key(namespace: str, meta: PodMeta) -> str:
    """``namespace/name`` (the ``generateName`` the name will be made from, before it is), for a
    message: made only when one is written."""
    return f"{namespace}/{meta.get('name') or meta.get('generateName', '')}"


def _podcliques_of(pcs: PodCliqueSet) -> Memo[CliqueIdentity, PodCliqueClaims]:
    """``podclique_claims`` of one PodCliqueSet, remembered by PodClique."""
    return Memo(partial(podclique_claims, pcs), PODCLIQUES)


def _small(patching: PatchInput) -> PatchInput | None:
    """A patch to remember, or None for one of many claims or containers (made each time), so
    that what the patches remembered hold does not depend on the pods sent."""
    shape = patching.shape
    containers = 1 + len(shape.containers) + len(shape.init_containers)
    return patching if containers * len(patching.claims) <= LARGEST_PATCH else None


class PodMutator:
    kind = POD
    objects = envelope(Pod)
    """A review is decoded no further than the members of a pod ``model.pod`` reads."""

    def __init__(self, store: PodCliqueSetSource, on_missing_pcs: Literal["deny", "allow"] = "deny") -> None:
        self.store = store
        self.on_missing_pcs = on_missing_pcs
        """Whether a Grove pod whose PodCliqueSet cannot be found is refused or admitted unchanged."""
        self.place = Memo(place, PLACEMENTS)
        self.podcliques = Memo.by_identity(_podcliques_of, PODCLIQUESETS)
        self.patches = Memo(patch_json, PATCHES, key=_small)

    async def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        if not _mutated(request):
            header = read_objects(request, _as_decoded if request.typed else read_pod_header, POD)
            if isinstance(header, AdmissionResponse):
                return header
            if request.operation == "CREATE" and header[0] is None:
                return response.errored(400, f"{NO_CONTENT}: request.object is missing")
            return response.allowed()
        objects = read_objects(request, _as_decoded if request.typed else read_pod, POD)
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
        try:
            identity = self.place(Placement.of(namespace, pcs_name, pod_labels[labels.PODCLIQUE], pod_labels))
            pcs = self.store.get(namespace, pcs_name) or await self.store.fetch(namespace, pcs_name)
            if pcs is None:
                return self.missing(namespace, pcs_name)
            podclique = self.podcliques(pcs)(identity)
            claims = podclique.of_pod(lambda: pod_index(pod_labels, _pod_key(namespace, meta)))
        except IdentityError as err:
            return response.denied(str(err))
        patching = PatchInput(shape_of(pod), tuple(claims))
        # Pods that a clique-level PerReplica entry tells apart each have a patch of their own.
        patch = patch_json(patching) if podclique.per_pod else self.patches(patching)
        return response.patched(patch, note=f"shared claims {', '.join(claims)}") if patch else response.allowed()

    def missing(self, namespace: str, name: str) -> AdmissionResponse:
        """A Grove pod whose PodCliqueSet cannot be found: denied, or (``allow``) admitted unchanged."""
        about = f"PodCliqueSet {namespace}/{name} (label {labels.PART_OF} of the pod) not found"
        if self.on_missing_pcs == "allow":
            return response.allowed([f"{about}: pod admitted without shared ResourceClaims"])
        return response.denied(f"{about}: the pod's shared ResourceClaims cannot be determined")
