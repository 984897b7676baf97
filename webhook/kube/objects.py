"""Objects of one resource by name, as plain JSON: read, replaced and deleted.

The client's typed API classes validate a body into their models, which refuse fields newer than
the client; a PUT of an object read through them would also drop such fields. A replace here sends
back exactly what was read, with only the caller's change, and the ``resourceVersion`` read, so a
write made meanwhile by someone else is never lost: the API server answers 409 Conflict.
"""

from __future__ import annotations

from typing import Any

import orjson
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.kube.resources import Resource

Obj = dict[str, Any]
JSON = {"Accept": "application/json", "Content-Type": "application/json"}


class Objects:
    def __init__(self, api: client.ApiClient, resource: Resource, namespace: str | None = None) -> None:
        assert resource.namespaced == (namespace is not None), f"{resource} is {'' if resource.namespaced else 'not '}namespaced"
        self._api = api
        base = "/api/v1" if not resource.group else f"/apis/{resource.group}/{resource.version}"
        where = f"/namespaces/{namespace}" if namespace is not None else ""
        self._collection = f"{base}{where}/{resource.plural}"

    def get(self, name: str) -> Obj:
        """The object; ``ApiException`` (404 when there is none) otherwise."""
        obj: Obj = orjson.loads(self._call("GET", name))
        return obj

    def replace(self, obj: Obj) -> None:
        """PUT of ``obj`` as given: a conflict (409) when it changed since it was read."""
        self._call("PUT", obj["metadata"]["name"], obj)

    def delete(self, name: str) -> None:
        self._call("DELETE", name)

    def _call(self, method: str, name: str, body: Obj | None = None) -> bytes:
        """The body of the answer, read in full so that the connection can serve the next request."""
        request = self._api.param_serialize(
            method, f"{self._collection}/{name}", header_params=dict(JSON), body=body, auth_settings=["BearerToken"]
        )
        response = self._api.call_api(*request)
        data: bytes = response.read()
        if not 200 <= response.status <= 299:
            raise ApiException.from_response(http_resp=response, body=None, data=None)
        return data
