"""``webhook status``: for each PodCliqueSet, what is wrong with its shared claims and pods, and why.

Reads the cluster once (``observed``: one paged List per resource), works out what must exist with
the functions the webhooks, the reconciler and ``claims`` use (``claims.listing``), and compares
(``compare``). Exit 0 when nothing is wrong, 1 when something is, 2 with one line when the cluster
cannot be read or the input is unusable.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from kubernetes import client

from webhook.claims.inputs import Workload, gather
from webhook.claims.listing import check_size, listing, owners
from webhook.core.model import labels
from webhook.core.model.meta import ObjectKey
from webhook.errors import CommandError
from webhook.kube.access import Component, guarded
from webhook.kube.config import KubeConfigError, api_client, own_namespace
from webhook.status import observed, render
from webhook.status.compare import report
from webhook.status.findings import Report
from webhook.status.settings import StatusSettings

WRONG = 1


def _namespaces(settings: StatusSettings) -> list[str | None]:
    if settings.all_namespaces:
        return [None]
    return list(settings.namespace) or [own_namespace(settings.kubeconfig, settings.context)]


def _belongs(cluster: observed.Cluster) -> None:
    """Keeps the scaling groups and PodCliques of PodCliqueSets that were read (one being deleted
    may outlive its PodCliqueSet for a moment)."""
    found = {observed.key_of(o) for _, o in cluster.workload_objects if o.get("kind") == "PodCliqueSet"}
    cluster.workload_objects = [
        (where, o) for where, o in cluster.workload_objects
        if o.get("kind") == "PodCliqueSet"
        or (observed.key_of(o)[0], ((o.get("metadata") or {}).get("labels") or {}).get(labels.PART_OF)) in found
    ]


def status(settings: StatusSettings) -> int:
    try:
        api = guarded(api_client(str(settings.kubeconfig) if settings.kubeconfig else None, settings.context), Component.STATUS)
    except KubeConfigError as err:
        raise CommandError(str(err), observed.UNUSABLE) from None
    namespaces = _namespaces(settings)
    cluster = observed.read(api, namespaces, settings.name)
    _belongs(cluster)
    workloads = gather(cluster.workload_objects)
    if settings.name and not workloads:
        where = "any namespace" if None in namespaces else "namespace " + ", ".join(map(str, namespaces))
        raise CommandError(f"PodCliqueSet {settings.name} not found in {where}", observed.UNUSABLE)
    reports = _reports(api, cluster, workloads, namespaces, settings)
    _write(reports, settings.output, namespaces)
    return WRONG if any(not r.healthy for r in reports) else 0


def _reports(
    api: client.ApiClient, cluster: observed.Cluster, workloads: list[Workload], namespaces: Sequence[str | None], settings: StatusSettings
) -> list[Report]:
    """Each PodCliqueSet's listing against the cluster, the templates of other namespaces its
    claims name read first (when not every namespace was)."""
    used = 0
    for workload in workloads:
        used += check_size(workload, used, settings.max_items)
    listings = [listing(workload, settings.max_claims_per_owner) for workload in workloads]
    if None not in namespaces:
        elsewhere = {c.template.namespace for item in listings for c in item.claims if isinstance(c.template, ObjectKey)}
        observed.read_templates(api, cluster, sorted(elsewhere - set(namespaces)))
    return [
        report(item, workload.pcs, owners(workload), cluster, settings.max_claims_per_owner)
        for item, workload in zip(listings, workloads, strict=True)
    ]


def _write(reports: list[Report], output: str, namespaces: Sequence[str | None]) -> None:
    if output == "json":
        sys.stdout.buffer.write(render.as_json(reports))
    elif output == "yaml":
        sys.stdout.write(render.as_yaml(reports))
    else:
        sys.stdout.write(render.as_text(reports) or f"No PodCliqueSets found in {', '.join(n or 'any namespace' for n in namespaces)}.\n")
    sys.stdout.flush()
