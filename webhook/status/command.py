"""``webhook status``: for each PodCliqueSet, what is wrong with its shared claims and pods, and why.

Reads the cluster once (``observed``: one paged List per resource), works out what must exist with
the functions the webhooks, the reconciler and ``claims`` use (``claims.listing``), and compares
(``compare``). Exit 0 when nothing is wrong, 1 when something is, 2 with one line when the cluster
cannot be read or the input is unusable.
"""

from __future__ import annotations

import sys

from webhook.claims.inputs import gather
from webhook.claims.listing import check_size, listing, owners
from webhook.core.model import labels
from webhook.core.sharing.templatesource import ExternalTemplate
from webhook.errors import CommandError
from webhook.kube.access import Component, guarded
from webhook.kube.config import KubeConfigError, api_client, own_namespace
from webhook.status import observed, render
from webhook.status.compare import report
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
    used = 0
    for workload in workloads:
        used += check_size(workload, used, settings.max_items)
    listings = [listing(workload, settings.max_claims_per_owner) for workload in workloads]
    if None not in namespaces:
        elsewhere = {c.template.namespace for item in listings for c in item.claims if isinstance(c.template, ExternalTemplate)}
        observed.read_templates(api, cluster, sorted(elsewhere - set(namespaces)))
    reports = [
        report(item, workload.sharing, owners(workload), cluster, settings.max_claims_per_owner)
        for item, workload in zip(listings, workloads, strict=True)
    ]
    if settings.output == "json":
        sys.stdout.buffer.write(render.as_json(reports))
    elif settings.output == "yaml":
        sys.stdout.write(render.as_yaml(reports))
    else:
        sys.stdout.write(render.as_text(reports) or f"No PodCliqueSets found in {', '.join(n or 'any namespace' for n in namespaces)}.\n")
    sys.stdout.flush()
    return WRONG if any(not r.healthy for r in reports) else 0
