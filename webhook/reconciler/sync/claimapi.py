"""ResourceClaim writes: create, read after a lost create race, patch metadata, delete.

Every write answers with the claim as the server stored it (a ``ClaimRecord``), so the cache can
be told about it before the watch brings it back. Responses are read raw: the typed models would
parse (and reject) spec fields this reconciler never looks at.
"""

from __future__ import annotations

from typing import Any

import pydantic
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.sharing.desired import DesiredClaim
from webhook.kube.apierrors import NOT_FOUND, read_json
from webhook.kube.resources import RESOURCECLAIMS
from webhook.reconciler.cluster.claimrecord import ClaimRecord

MERGE_PATCH = "application/merge-patch+json"


class InvalidClaim(Exception):
    """A claim body the client refuses to send (e.g. a template field this client does not know)."""


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


def claim_model(body: dict[str, Any]) -> client.ResourceV1ResourceClaim:
    """The body as the typed model ``ResourceV1Api`` sends; refused here, before any request, when
    the template has a field this client version does not know."""
    try:
        return client.ResourceV1ResourceClaim.model_validate(body)
    except pydantic.ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InvalidClaim(f"the claim cannot be sent: {where}: {first['msg']}") from None


class ClaimApi:
    def __init__(self, api: client.ApiClient) -> None:
        self._claims = client.ResourceV1Api(api)

    def create(self, claim: client.ResourceV1ResourceClaim) -> ClaimRecord:
        """Raises ``ApiException`` 409 when a claim of that name exists already."""
        metadata = claim.metadata
        assert metadata is not None and metadata.namespace is not None, "claim_body names the namespace"
        response = self._claims.create_namespaced_resource_claim(metadata.namespace, claim, _preload_content=False)
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
