"""What ``status`` reads from the API server: one paged List per resource and namespace (or one
across namespaces), never a GET per object, through the access table's ``status`` row, so the
Role the README gives it is exactly what it uses.

Grove's objects and pods are listed by label (only those of PodCliqueSets), claims whole (a claim of
a shared claim's name made by someone else must be seen), Events by field (Warnings about Grove's
objects, where the reconciler reports). Lists are read in pages, so that neither the API server nor
this process builds one huge answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.claims.workloads import UNUSABLE
from webhook.core.model import labels
from webhook.errors import CommandError
from webhook.kube.api import (
    CONNECTION_ERRORS, EVENTS, PODCLIQUES, PODCLIQUESCALINGGROUPS, PODCLIQUESETS, PODS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES,
    Resource, connection_problem, status_message,
)

PAGE = 500
TIMEOUT = (10.0, 60.0)
"""Seconds to connect and to read one page."""
WARNINGS = "type=Warning,involvedObject.apiVersion=grove.io/v1alpha1"

Key = tuple[str, str]
Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class EventText:
    """An Event as ``kubectl describe`` shows one: type, reason, how often, message."""

    type: str
    reason: str
    message: str
    count: int
    last: str
    """When it was last seen (RFC 3339), as the API server wrote it."""

    def __str__(self) -> str:
        times = f" (x{self.count})" if self.count > 1 else ""
        return f"{self.type} {self.reason}{times} at {self.last}: {self.message}"

    @classmethod
    def of(cls, event: Obj) -> EventText:
        """When it last happened is the first of the fields events.k8s.io and core Events fill."""
        last = event.get("lastTimestamp") or event.get("eventTime") or (event.get("metadata") or {}).get("creationTimestamp")
        return cls(event.get("type") or "", event.get("reason") or "", event.get("message") or "", int(event.get("count") or 1), str(last or ""))


@dataclass(slots=True)
class Cluster:
    """The objects read, indexed as the comparison looks them up."""

    workload_objects: list[tuple[str, Obj]] = field(default_factory=list)
    """PodCliqueSets, scaling groups and PodCliques, each with where it came from."""
    claims: dict[Key, Obj] = field(default_factory=dict)
    templates: set[Key] = field(default_factory=set)
    pods: dict[Key, list[Obj]] = field(default_factory=dict)
    """Grove pods by (namespace, PodCliqueSet), those being deleted left out."""
    warnings: dict[str, EventText] = field(default_factory=dict)
    """The last Warning Event on each object, by its UID."""

    def pods_of(self, namespace: str, pcs: str) -> list[Obj]:
        return self.pods.get((namespace, pcs), [])

    def last_warning(self, uid: str) -> EventText | None:
        return self.warnings.get(uid) if uid else None


def key_of(obj: Obj) -> Key:
    """(namespace, name) of an object as listed."""
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


def list_objects(api: client.ApiClient, resource: Resource, namespace: str | None, label: str = "", fields: str = "") -> Iterator[Obj]:
    """Every item of the List, page by page."""
    path, token = _path(resource, namespace), ""
    while True:
        query = [(k, v) for k, v in (("labelSelector", label), ("fieldSelector", fields), ("continue", token)) if v]
        page = _page(api, path, [("limit", PAGE), *query], f"{resource} in namespace {namespace}" if namespace else f"{resource} across namespaces")
        yield from page.get("items") or []
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return


def _path(resource: Resource, namespace: str | None) -> str:
    base = f"/apis/{resource.group}/{resource.version}" if resource.group else f"/api/{resource.version}"
    return f"{base}/namespaces/{namespace}/{resource.plural}" if namespace else f"{base}/{resource.plural}"


def _page(api: client.ApiClient, path: str, query: list[tuple[str, Any]], what: str) -> Obj:
    """One page of a List; a refusal or a failure to connect is one line."""
    try:
        request = api.param_serialize("GET", path, query_params=query, header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
        response = api.call_api(*request, _request_timeout=TIMEOUT)
        data = response.read()
        if not 200 <= response.status <= 299:
            raise ApiException.from_response(http_resp=response, body=None, data=None)
    except ApiException as err:
        raise CommandError(f"cannot list {what}: {status_message(err)}", UNUSABLE) from None
    except CONNECTION_ERRORS as err:
        raise CommandError(f"{connection_problem(err)} (at {api.configuration.host})", UNUSABLE) from None
    page: Obj = orjson.loads(data)
    return page


def read(api: client.ApiClient, namespaces: Sequence[str | None], name: str | None) -> Cluster:
    """Everything ``status`` compares, for the PodCliqueSet ``name`` or all, in ``namespaces``
    (``None`` for all of them). The scaling groups and PodCliques kept are those of PodCliqueSets
    read: one being deleted may outlive its PodCliqueSet for a moment."""
    cluster = Cluster()
    for namespace in namespaces:
        _read_namespace(api, cluster, namespace, name)
    found = {key_of(o) for _, o in cluster.workload_objects if o.get("kind") == "PodCliqueSet"}
    cluster.workload_objects = [
        (where, o) for where, o in cluster.workload_objects
        if o.get("kind") == "PodCliqueSet" or (key_of(o)[0], ((o.get("metadata") or {}).get("labels") or {}).get(labels.PART_OF)) in found
    ]
    return cluster


def _read_namespace(api: client.ApiClient, cluster: Cluster, namespace: str | None, name: str | None) -> None:
    """One namespace's objects (all namespaces' for None) into ``cluster``."""
    workload = f"{labels.PART_OF}={name}" if name else labels.PART_OF
    by_name = f"metadata.name={name}" if name else ""
    for resource, label, fields in ((PODCLIQUESETS, "", by_name), (PODCLIQUESCALINGGROUPS, workload, ""), (PODCLIQUES, workload, "")):
        cluster.workload_objects += ((f"{resource.kind} {'/'.join(key_of(o))}", o) for o in list_objects(api, resource, namespace, label, fields))
    cluster.claims.update((key_of(o), o) for o in list_objects(api, RESOURCECLAIMS, namespace))
    cluster.templates.update(key_of(o) for o in list_objects(api, RESOURCECLAIMTEMPLATES, namespace))
    _read_pods_and_events(api, cluster, namespace, workload)


def _read_pods_and_events(api: client.ApiClient, cluster: Cluster, namespace: str | None, workload: str) -> None:
    """Grove's pods of the PodCliqueSets read, those being deleted left out; and the last Warning
    Event on each object."""
    for pod in list_objects(api, PODS, namespace, f"{workload},{labels.PODCLIQUE}"):
        if not pod["metadata"].get("deletionTimestamp"):
            cluster.pods.setdefault((key_of(pod)[0], str(pod["metadata"]["labels"][labels.PART_OF])), []).append(pod)
    events = list_objects(api, EVENTS, namespace, fields=WARNINGS)
    cluster.warnings.update(sorted(((str((e.get("involvedObject") or {}).get("uid") or ""), EventText.of(e)) for e in events), key=lambda p: p[1].last))


def read_templates(api: client.ApiClient, cluster: Cluster, namespaces: Sequence[str]) -> None:
    """The templates of namespaces not read yet that external templates are in (one List each). A
    namespace whose templates may not be listed is passed over: its templates then show as not
    found or not readable, which is what the reconciler would meet if its access were the same."""
    for namespace in namespaces:
        try:
            cluster.templates.update(key_of(o) for o in list_objects(api, RESOURCECLAIMTEMPLATES, namespace))
        except CommandError:
            continue
