"""ResourceClaim writes: create, read after a lost create race, patch metadata, delete.

Every write answers with the claim as the server stored it (a ``ClaimRecord``), so the cache can
be told about it before the watch brings it back. Claims are sent and read as plain JSON, never
through the client's typed models: those refuse fields newer than the client (a template may use
any field the API server serves), and the API server is the one to validate a claim's spec.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.sharing.desired import DesiredClaim
from webhook.kube.apierrors import NOT_FOUND, read_json
from webhook.kube.resources import RESOURCECLAIMS
from webhook.reconciler.cluster.claimrecord import ClaimRecord

MERGE_PATCH = "application/merge-patch+json"


def claim_body(namespace: str, desired: DesiredClaim, spec: dict[str, Any]) -> dict[str, Any]:
    """The claim Grove would create: labels §4.5, one controller reference §4.6, the template's
    spec verbatim and nothing else (template metadata is not copied, §6.4)."""
    return {
        "apiVersion": RESOURCECLAIMS.api_version,
        "kind": RESOURCECLAIMS.kind,
        "metadata": {
            "name": desired.name,
            "namespace": namespace,
            "labels": dict(desired.labels),
            "ownerReferences": [desired.owner.to_api()],
        },
        "spec": spec,
    }


class ClaimApi:
    def __init__(self, api: client.ApiClient) -> None:
        self._claims = client.ResourceV1Api(api)
        # Creates go through the untyped API: ResourceV1Api validates its body into the typed model.
        self._objects = client.CustomObjectsApi(api)

    def create(self, claim: dict[str, Any]) -> ClaimRecord:
        """Creates a ``claim_body``; raises ``ApiException`` 409 when a claim of that name exists already."""
        group, version, plural = RESOURCECLAIMS.group, RESOURCECLAIMS.version, RESOURCECLAIMS.plural
        namespace = claim["metadata"]["namespace"]
        response = self._objects.create_namespaced_custom_object(group, version, namespace, plural, claim, _preload_content=False)
        return ClaimRecord.from_object(read_json(response))

    def read(self, namespace: str, name: str) -> ClaimRecord | None:
        try:
            response = self._claims.read_namespaced_resource_claim(name, namespace, _preload_content=False)
        except ApiException as err:
            if err.status == NOT_FOUND:
                return None
            raise
        return ClaimRecord.from_object(read_json(response))

    def patch(self, namespace: str, name: str, patch: dict[str, Any]) -> ClaimRecord:
        response = self._claims.patch_namespaced_resource_claim(
            name, namespace, patch, _content_type=MERGE_PATCH, _preload_content=False
        )
        return ClaimRecord.from_object(read_json(response))

    def delete(self, claim: ClaimRecord) -> bool:
        """Delete exactly this claim (UID precondition); False when it was gone already."""
        options = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=claim.uid))
        try:
            response = self._claims.delete_namespaced_resource_claim(
                claim.name, claim.namespace, body=options, _preload_content=False
            )
        except ApiException as err:
            if err.status == NOT_FOUND:
                return False
            raise
        read_json(response)
        return True
