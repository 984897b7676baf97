"""What ``status`` reads from the API server: one paged List per resource and namespace (or one
across namespaces), never a GET per object, through the access table's ``status`` row, so the
Role the README gives it is exactly what it uses (``get`` and ``list``, nothing else).

Grove's objects and pods are listed by label (only those of PodCliqueSets), claims whole (a claim of
a shared claim's name made by someone else must be seen), Events by field (Warnings about Grove's
objects, where the reconciler reports). A List is read 500 items a page, so that neither the API
server nor this process builds one huge answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.model import labels
from webhook.errors import CommandError
from webhook.kube.apierrors import status_message
from webhook.kube.connection import CONNECTION_ERRORS, connection_problem
from webhook.kube.resources import (
    EVENTS,
    PODCLIQUES,
    PODCLIQUESCALINGGROUPS,
    PODCLIQUESETS,
    PODS,
    RESOURCECLAIMS,
    RESOURCECLAIMTEMPLATES,
    Resource,
)
from webhook.status.findings import EventText

UNUSABLE = 2
PAGE = 500
TIMEOUT = (10.0, 60.0)
"""Seconds to connect and to read one page."""

Key = tuple[str, str]
Obj = dict[str, Any]


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


def _path(resource: Resource, namespace: str | None) -> str:
    base = f"/apis/{resource.group}/{resource.version}" if resource.group else f"/api/{resource.version}"
    return f"{base}/namespaces/{namespace}/{resource.plural}" if namespace else f"{base}/{resource.plural}"


def list_objects(
    api: client.ApiClient, resource: Resource, namespace: str | None, *, label: str = "", fields: str = ""
) -> Iterator[Obj]:
    """Every item of the List, page by page; a refusal or a failure to connect is one line."""
    token = ""
    while True:
        query: list[tuple[str, Any]] = [("limit", PAGE)]
        query += [(k, v) for k, v in (("labelSelector", label), ("fieldSelector", fields), ("continue", token)) if v]
        page = _page(api, resource, namespace, query)
        yield from page.get("items") or []
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return


def _page(api: client.ApiClient, resource: Resource, namespace: str | None, query: list[tuple[str, Any]]) -> Obj:
    """One page of the List; a refusal or a failure to connect is one line."""
    try:
        request = api.param_serialize(
            "GET", _path(resource, namespace), query_params=query, header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        response = api.call_api(*request, _request_timeout=TIMEOUT)
        data = response.read()
        if not 200 <= response.status <= 299:
            raise ApiException.from_response(http_resp=response, body=None, data=None)
        page: Obj = orjson.loads(data)
    except ApiException as err:
        where = f"in namespace {namespace}" if namespace else "across namespaces"
        raise CommandError(f"cannot list {resource} {where}: {status_message(err)}", UNUSABLE) from None
    except CONNECTION_ERRORS as err:
        raise CommandError(f"{connection_problem(err)} (at {api.configuration.host})", UNUSABLE) from None
    return page


def key_of(obj: Obj) -> Key:
    """(namespace, name) of an object as listed."""
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


def _last(obj: Obj) -> str:
    """When an Event last happened: the fields events.k8s.io and core Events fill, in that order."""
    return str(obj.get("lastTimestamp") or obj.get("eventTime") or (obj.get("metadata") or {}).get("creationTimestamp") or "")


def _event(obj: Obj) -> tuple[str, EventText]:
    last = _last(obj)
    text = EventText(obj.get("type") or "", obj.get("reason") or "", obj.get("message") or "", int(obj.get("count") or 1), last)
    return str((obj.get("involvedObject") or {}).get("uid") or ""), text


def read(api: client.ApiClient, namespaces: Sequence[str | None], name: str | None) -> Cluster:
    """Everything ``status`` compares, for the PodCliqueSet ``name`` or all, in ``namespaces``
    (``None`` for all of them)."""
    cluster = Cluster()
    for namespace in namespaces:
        _read_namespace(api, cluster, namespace, name)
    return cluster


def _read_namespace(api: client.ApiClient, cluster: Cluster, namespace: str | None, name: str | None) -> None:
    """One namespace's objects (all namespaces' for None) into ``cluster``."""
    workload = f"{labels.PART_OF}={name}" if name else labels.PART_OF
    by_name = f"metadata.name={name}" if name else ""
    for resource, label, fields in ((PODCLIQUESETS, "", by_name), (PODCLIQUESCALINGGROUPS, workload, ""), (PODCLIQUES, workload, "")):
        cluster.workload_objects += ((f"{resource.kind} {'/'.join(key_of(o))}", o) for o in list_objects(api, resource, namespace, label=label, fields=fields))
    cluster.claims.update((key_of(o), o) for o in list_objects(api, RESOURCECLAIMS, namespace))
    cluster.templates.update(key_of(o) for o in list_objects(api, RESOURCECLAIMTEMPLATES, namespace))
    _read_pods(api, cluster, namespace, workload)
    events = list_objects(api, EVENTS, namespace, fields="type=Warning,involvedObject.apiVersion=grove.io/v1alpha1")
    for uid, text in sorted(map(_event, events), key=lambda pair: pair[1].last):
        cluster.warnings[uid] = text


def _read_pods(api: client.ApiClient, cluster: Cluster, namespace: str | None, workload: str) -> None:
    """Grove's pods of the PodCliqueSets read, those being deleted left out."""
    for pod in list_objects(api, PODS, namespace, label=f"{workload},{labels.PODCLIQUE}"):
        if not (pod.get("metadata") or {}).get("deletionTimestamp"):
            pcs = str(pod["metadata"]["labels"][labels.PART_OF])
            cluster.pods.setdefault((key_of(pod)[0], pcs), []).append(pod)


def read_templates(api: client.ApiClient, cluster: Cluster, namespaces: Sequence[str]) -> None:
    """The templates of namespaces not read yet that external templates are in (one List each). A
    namespace whose templates may not be listed is passed over: its templates then show as not
    found or not readable, which is what the reconciler would meet if its access were the same."""
    for namespace in namespaces:
        try:
            cluster.templates.update(key_of(o) for o in list_objects(api, RESOURCECLAIMTEMPLATES, namespace))
        except CommandError:
            continue
