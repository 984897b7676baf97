"""The API server: the resources this project reads or writes, their objects as plain JSON, and its
failures said in one line. The client's typed models refuse fields newer than the client and drop
them from a PUT; here a body goes out as given, for the API server to validate, and a replace sends
back what was read with its ``resourceVersion``, so that a write made meanwhile is never lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

Obj = dict[str, Any]
JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
NOT_FOUND = 404
CONFLICT = 409
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (urllib3.exceptions.HTTPError, OSError)


@dataclass(frozen=True, slots=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


PODCLIQUESETS = Resource("grove.io", "v1alpha1", "podcliquesets", "PodCliqueSet")
PODCLIQUESCALINGGROUPS = Resource("grove.io", "v1alpha1", "podcliquescalinggroups", "PodCliqueScalingGroup")
PODCLIQUES = Resource("grove.io", "v1alpha1", "podcliques", "PodClique")
RESOURCECLAIMS = Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim")
RESOURCECLAIMTEMPLATES = Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate")
EVENTS = Resource("", "v1", "events", "Event")
PODS = Resource("", "v1", "pods", "Pod")
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
SUBJECTACCESSREVIEWS = Resource("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False)
SECRETS = Resource("", "v1", "secrets", "Secret")
VALIDATINGWEBHOOKCONFIGURATIONS = Resource(
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", False
)
MUTATINGWEBHOOKCONFIGURATIONS = Resource(
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", False
)


class Objects:
    """Objects of one resource by name; ``timeout``: seconds each request may take, else the client's."""

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
        return self._call("GET", f"/{name}")

    def find(self, name: str) -> Obj | None:
        try:
            return self.get(name)
        except ApiException as err:
            if err.status == NOT_FOUND:
                return None
            raise

    def create(self, obj: Obj, field_manager: str | None = None) -> Obj:
        """The object as stored; 409 when one of that name exists. ``field_manager``: the name the
        API server records in ``managedFields`` for this write, rather than the User-Agent's."""
        return self._call("POST", "", obj, field_manager=field_manager)

    def patch(self, name: str, patch: Obj, field_manager: str | None = None) -> Obj:
        """A JSON merge patch; the object as stored."""
        return self._call("PATCH", f"/{name}", patch, MERGE_PATCH, field_manager)

    def replace(self, obj: Obj) -> Obj:
        """PUT of ``obj`` as given: a conflict (409) when it changed since it was read."""
        return self._call("PUT", f"/{obj['metadata']['name']}", obj)

    def delete(self, name: str, uid: str | None = None) -> None:
        """Deletes the object (only if it still has ``uid``, when given: 409 otherwise)."""
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": uid}} if uid else None
        self._call("DELETE", f"/{name}", options)

    def _call(self, method: str, path: str, body: Obj | None = None, content_type: str = JSON,
              field_manager: str | None = None) -> Obj:
        """The answer, read in full so that the connection can serve the next request."""
        headers = {"Accept": JSON, "Content-Type": content_type}
        query = [("fieldManager", field_manager)] if field_manager else None
        request = self._api.param_serialize(
            method, self._collection + path, query_params=query, header_params=headers, body=body, auth_settings=["BearerToken"]
        )
        response = self._api.call_api(*request, _request_timeout=self._timeout)
        data: bytes = response.read()
        if not 200 <= response.status <= 299:
            raise ApiException.from_response(http_resp=response, body=None, data=None)
        answer: Obj = orjson.loads(data) if data else {}
        return answer


def status_message(err: ApiException) -> str:
    """The ``message`` of the ``Status`` the server answered with, else the HTTP reason."""
    try:
        body = orjson.loads(err.body or b"")
    except (orjson.JSONDecodeError, TypeError):
        body = None
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join((str(message) if message else f"{err.status} {err.reason}").split())


def is_connection_error(err: BaseException) -> bool:
    """The request got no answer from the API server (as opposed to an error answer)."""
    return isinstance(err, CONNECTION_ERRORS) or (isinstance(err, ApiException) and err.status == 0)


def connection_problem(err: BaseException) -> str:
    """What failed in one line: urllib3's texts name the connection object and repeat the URL."""
    if isinstance(err, urllib3.exceptions.MaxRetryError) and err.reason is not None:
        return connection_problem(err.reason)
    if isinstance(err, urllib3.exceptions.HTTPError):
        return _transport_problem(err)
    if isinstance(err, ApiException):
        return " ".join(f"API error {err.status} {err.reason or ''}".split())
    return _one_line(err)


def _transport_problem(err: urllib3.exceptions.HTTPError) -> str:
    if isinstance(err, urllib3.exceptions.NewConnectionError):
        return f"cannot connect to the API server: {str(err).split('Failed to establish a new connection: ', 1)[-1]}"
    if isinstance(err, (urllib3.exceptions.ReadTimeoutError, urllib3.exceptions.ConnectTimeoutError)):
        return "the API server did not answer in time"
    if isinstance(err, urllib3.exceptions.ProtocolError):
        inner = err.args[1] if len(err.args) > 1 else None
        return "connection to the API server lost" + (f": {type(inner).__name__}" if isinstance(inner, BaseException) else "")
    return _one_line(err)


def _one_line(err: BaseException) -> str:
    return " ".join((str(err) or type(err).__name__).split())
