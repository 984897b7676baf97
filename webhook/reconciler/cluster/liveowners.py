"""The owners as the API server has them now, for the decisions the caches must not make alone.

The watches are separate streams, and Grove's own operator (v0.1.0-alpha.8 and later) writes the
same claims: the claim it creates for a PodClique it has just scaled out can reach the claim
cache before the PodClique's new replica count reaches the PodClique cache. Judged from the
caches, that claim is stale. So a claim is deleted only when a read of its owner confirms it (the
same UID, not being deleted, an index at or above its replicas now), and a claim someone deleted
a moment ago is re-created only when a read confirms the owner still needs it. One GET per owner
and reconcile, and only when such a decision is due.
"""

from __future__ import annotations

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.model.meta import OwnerReference
from webhook.core.sharing.owners import Owner
from webhook.kube.apierrors import NOT_FOUND, read_json
from webhook.kube.resources import PODCLIQUES, PODCLIQUESCALINGGROUPS, PODCLIQUESETS

RESOURCES = {r.kind: r for r in (PODCLIQUESETS, PODCLIQUESCALINGGROUPS, PODCLIQUES)}


class LiveOwners:
    """Owner reads for one reconcile of one PodCliqueSet; each owner is read at most once."""

    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self._api = client.CustomObjectsApi(api)
        self._namespace = namespace
        self._replicas: dict[tuple[str, str], int | None] = {}

    def replicas(self, owner: Owner) -> int | None:
        """The owner's replicas now; None when it is gone, re-created (another UID), being deleted
        or unreadable as an owner. API errors other than 404 are raised."""
        reference = owner.reference
        key = (reference.kind, reference.name)
        if key not in self._replicas:
            self._replicas[key] = self._read(reference)
        return self._replicas[key]

    def _read(self, reference: OwnerReference) -> int | None:
        resource = RESOURCES[reference.kind]
        try:
            response = self._api.get_namespaced_custom_object(
                resource.group, resource.version, self._namespace, resource.plural, reference.name,
                _preload_content=False,
            )
        except ApiException as err:
            if err.status == NOT_FOUND:
                return None
            raise
        return _replicas(read_json(response), reference.uid)


def _replicas(obj: object, uid: str) -> int | None:
    """The replicas of the object read, if it is the owner of ``uid`` and not being deleted."""
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    spec = obj.get("spec") if isinstance(obj, dict) else None
    if not isinstance(metadata, dict) or not isinstance(spec, dict):
        return None
    if metadata.get("uid") != uid or metadata.get("deletionTimestamp"):
        return None
    replicas = spec.get("replicas", 0)
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None
