"""Objects of one resource by name, as plain JSON: created, read, patched, replaced and deleted.

The client's typed models refuse fields newer than the client and drop them from a PUT; here a
body goes out as given, for the API server to validate, and a replace sends back what was read
with its ``resourceVersion``, so that a write made meanwhile is never lost (409 Conflict).
"""

from __future__ import annotations

from typing import Any

import orjson
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.kube.apierrors import NOT_FOUND
from webhook.kube.resources import Resource

Obj = dict[str, Any]
JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"


class Objects:
    """``timeout``: seconds each request may take, else the client's."""

    def __init__(
        self, api: client.ApiClient, resource: Resource, namespace: str | None = None, timeout: float | None = None
    ) -> None:
        assert resource.namespaced == (namespace is not None), f"{resource} is {'' if resource.namespaced else 'not '}namespaced"
        self._api = api
        self._timeout = timeout
        base = "/api/v1" if not resource.group else f"/apis/{resource.group}/{resource.version}"
        where = f"/namespaces/{namespace}" if namespace is not None else ""
        self._collection = f"{base}{where}/{resource.plural}"

    def get(self, name: str) -> Obj:
        """The object; ``ApiException`` (404 when there is none) otherwise."""
        return self._call("GET", f"/{name}")

    def find(self, name: str) -> Obj | None:
        """The object, or None when there is none."""
        try:
            return self.get(name)
        except ApiException as err:
            if err.status == NOT_FOUND:
                return None
            raise

    def create(self, obj: Obj) -> Obj:
        """The object as stored; 409 when one of that name exists."""
        return self._call("POST", "", obj)

    def patch(self, name: str, patch: Obj) -> Obj:
        """A JSON merge patch; the object as stored."""
        return self._call("PATCH", f"/{name}", patch, MERGE_PATCH)

    def replace(self, obj: Obj) -> Obj:
        """PUT of ``obj`` as given: a conflict (409) when it changed since it was read."""
        return self._call("PUT", f"/{obj['metadata']['name']}", obj)

    def delete(self, name: str, uid: str | None = None) -> None:
        """Deletes the object (only if it still has ``uid``, when given: 409 otherwise)."""
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": uid}} if uid else None
        self._call("DELETE", f"/{name}", options)

    def _call(self, method: str, path: str, body: Obj | None = None, content_type: str = JSON) -> Obj:
        """The answer, read in full so that the connection can serve the next request."""
        headers = {"Accept": JSON, "Content-Type": content_type}
        request = self._api.param_serialize(
            method, self._collection + path, header_params=headers, body=body, auth_settings=["BearerToken"]
        )
        response = self._api.call_api(*request, _request_timeout=self._timeout)
        data: bytes = response.read()
        if not 200 <= response.status <= 299:
            raise ApiException.from_response(http_resp=response, body=None, data=None)
        answer: Obj = orjson.loads(data) if data else {}
        return answer
