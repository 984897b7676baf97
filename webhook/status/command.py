"""``webhook status``: for each PodCliqueSet, what is wrong with its shared claims and pods, and why
(DECISIONS.md §8). The cluster is read once, by paged Lists, never a GET per object, through the
access table's ``status`` row, so the Role the README gives it is exactly what it uses; ``compare``
sets it against what must exist. Exit 0 when nothing is wrong, 1 when something is, 2 with one line
when the cluster cannot be read or the input is unusable.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import suppress
from dataclasses import asdict
from typing import Any

import orjson
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.claims import write
from webhook.claims.listing import UNUSABLE, Workload, check_sizes, gather, listing
from webhook.core.model import labels
from webhook.core.model.meta import ObjectKey
from webhook.core.sharing.desired import template_source
from webhook.core.sharing.makers import Maker
from webhook.errors import CommandError
from webhook.kube.access import Component, KubeConfigError, api_client, guarded, own_namespace
from webhook.kube.informer import object_key
from webhook.kube.api import (
    CONNECTION_ERRORS, EVENTS, PODCLIQUES, PODCLIQUESCALINGGROUPS, PODCLIQUESETS, PODS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES,
    Resource, connection_problem, status_message,
)
from webhook.status import StatusSettings
from webhook.status.compare import Cluster, EventText, Obj, Report, report

WRONG = 1
PAGE = 500
TIMEOUT = (10.0, 60.0)
"""Seconds to connect and to read one page."""
WARNINGS = "type=Warning,involvedObject.apiVersion=grove.io/v1alpha1"


def status(settings: StatusSettings) -> int:
    try:
        api = guarded(api_client(str(settings.kubeconfig) if settings.kubeconfig else None, settings.context), Component.STATUS)
    except KubeConfigError as err:
        raise CommandError(str(err), UNUSABLE) from None
    namespaces = [None] if settings.all_namespaces else list(settings.namespace) or [own_namespace(settings.kubeconfig, settings.context)]
    cluster = read(api, namespaces, settings.name)
    workloads = gather(cluster.workload_objects)
    if settings.name and not workloads:
        raise CommandError(f"PodCliqueSet {settings.name} not found in {_where(namespaces)}", UNUSABLE)
    reports = _reports(api, cluster, workloads, namespaces, settings)
    write(document(reports), settings.output, lambda: as_text(reports) or _nothing(namespaces))
    return WRONG if any(not r.healthy for r in reports) else 0


def _where(namespaces: Sequence[str | None]) -> str:
    return "any namespace" if None in namespaces else "namespace " + ", ".join(map(str, namespaces))


def _nothing(namespaces: Sequence[str | None]) -> str:
    return f"No PodCliqueSets found in {', '.join(n or 'any namespace' for n in namespaces)}.\n"


def _reports(
    api: client.ApiClient, cluster: Cluster, workloads: list[Workload], namespaces: Sequence[str | None], settings: StatusSettings
) -> list[Report]:
    """Each PodCliqueSet's listing against the cluster, the templates of other namespaces its
    claims name read first (when not every namespace was, one List each). A namespace whose templates
    may not be listed is passed over: its templates then show as not found or not readable, which is
    what the reconciler would meet if its access were the same."""
    check_sizes(workloads, settings.max_items)
    listings = [listing(workload, settings.max_claims_per_owner) for workload in workloads]
    if None not in namespaces:
        templates = (template_source(item.pcs, claim.entry) for item in listings for claim in item.claims)
        elsewhere = {template.namespace for template in templates if isinstance(template, ObjectKey)}
        for namespace in sorted(elsewhere - set(namespaces)):
            with suppress(CommandError):
                cluster.templates.update(map(object_key, list_objects(api, RESOURCECLAIMTEMPLATES, namespace)))
    return [report(item, cluster, settings.max_claims_per_owner) for item in listings]


def document(reports: Sequence[Report]) -> dict[str, Any]:
    """What ``-o json`` and ``-o yaml`` print: each PodCliqueSet's counts, findings and warnings."""
    return {
        "podCliqueSets": [
            {
                "namespace": r.namespace,
                "name": r.name,
                "healthy": r.healthy,
                "claims": {"expected": r.claims, "present": r.present, "madeBy": r.made_by.value if r.made_by else None},
                "pods": r.pods,
                "findings": [
                    {"problem": str(f.problem), "object": f.subject, "message": f.message, "lastEvent": asdict(f.event) if f.event else None}
                    for f in r.findings
                ],
                "warnings": r.warnings,
            }
            for r in reports
        ]
    }


def as_text(reports: Sequence[Report]) -> str:
    """One line for a PodCliqueSet that is well; else that line, then each finding indented, with
    the last Event the reconciler wrote about it below."""
    lines = []
    for r in reports:
        problems = f"{len(r.findings)} problem{'s' if len(r.findings) != 1 else ''}" if r.findings else "all as they should be"
        made_by = f" (made by {r.made_by.who})" if r.made_by is Maker.GROVE else ""
        lines.append(f"PodCliqueSet {r.namespace}/{r.name}: {r.present} of {r.claims} shared claims{made_by}, {r.pods} pods: {problems}")
        for finding in r.findings:
            lines.append(f"  {finding.subject}: {finding.message}")
            if finding.event:
                lines.append(f"    last Event: {finding.event}")
        lines += [f"  Warning: {warning}" for warning in r.warnings]
    return "\n".join(lines) + "\n" if lines else ""


def list_objects(api: client.ApiClient, resource: Resource, namespace: str | None, label: str = "", fields: str = "") -> Iterator[Obj]:
    """Every item of the List, page by page."""
    token = ""
    while True:
        query = [(k, v) for k, v in (("labelSelector", label), ("fieldSelector", fields), ("continue", token)) if v]
        page = _page(api, resource, namespace, [("limit", PAGE), *query])
        yield from page.get("items") or []
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return


def _page(api: client.ApiClient, resource: Resource, namespace: str | None, query: list[tuple[str, Any]]) -> Obj:
    """One page of a List; a refusal or a failure to connect is one line."""
    base = ("/apis/" if resource.group else "/api/") + resource.api_version
    path = f"{base}/namespaces/{namespace}/{resource.plural}" if namespace else f"{base}/{resource.plural}"
    try:
        request = api.param_serialize("GET", path, query_params=query, header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
        response = api.call_api(*request, _request_timeout=TIMEOUT)
        data = response.read()
        if not 200 <= response.status <= 299:
            raise ApiException.from_response(http_resp=response, body=None, data=None)
    except ApiException as err:
        what = f"{resource} in namespace {namespace}" if namespace else f"{resource} across namespaces"
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
    found = {object_key(o) for _, o in cluster.workload_objects if o.get("kind") == "PodCliqueSet"}
    cluster.workload_objects = [
        (where, o) for where, o in cluster.workload_objects
        if o.get("kind") == "PodCliqueSet" or (o["metadata"]["namespace"], o["metadata"]["labels"][labels.PART_OF]) in found
    ]
    return cluster


def _read_namespace(api: client.ApiClient, cluster: Cluster, namespace: str | None, name: str | None) -> None:
    """One namespace's objects (all namespaces' for None) into ``cluster``: Grove's pods of the
    PodCliqueSets read, those being deleted left out, and the last Warning Event on each object (an
    Event always has ``involvedObject``, a Go struct, and a ``uid`` there only when it is not empty)."""
    workload = f"{labels.PART_OF}={name}" if name else labels.PART_OF
    by_name = f"metadata.name={name}" if name else ""
    for resource, label, fields in ((PODCLIQUESETS, "", by_name), (PODCLIQUESCALINGGROUPS, workload, ""), (PODCLIQUES, workload, "")):
        cluster.workload_objects += ((f"{resource.kind} {object_key(o)}", o) for o in list_objects(api, resource, namespace, label, fields))
    cluster.claims.update((object_key(o), o) for o in list_objects(api, RESOURCECLAIMS, namespace))
    cluster.templates.update(map(object_key, list_objects(api, RESOURCECLAIMTEMPLATES, namespace)))
    for pod in list_objects(api, PODS, namespace, f"{workload},{labels.PODCLIQUE}"):
        if not pod["metadata"].get("deletionTimestamp"):
            cluster.pods.setdefault(ObjectKey(pod["metadata"]["namespace"], pod["metadata"]["labels"][labels.PART_OF]), []).append(pod)
    events = list_objects(api, EVENTS, namespace, fields=WARNINGS)
    cluster.warnings.update(sorted(((e["involvedObject"].get("uid", ""), EventText.of(e)) for e in events), key=lambda p: p[1].last))
