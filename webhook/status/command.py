"""``webhook status``: for each PodCliqueSet, what is wrong with its shared claims and pods, and why.

Reads the cluster once (``observed``: one paged List per resource), works out what must exist with
the functions the webhooks, the reconciler and ``claims`` use (``claims.listing``), and compares
(``compare``). Prints a few lines per PodCliqueSet for a person, or one JSON or YAML document for a
script (``{"podCliqueSets": [...]}``). Exit 0 when nothing is wrong, 1 when something is, 2 with
one line when the cluster cannot be read or the input is unusable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from kubernetes import client

from webhook.claims import write
from webhook.claims.listing import check_sizes, listing, owners
from webhook.claims.workloads import UNUSABLE, Workload, gather
from webhook.core.model.meta import ObjectKey
from webhook.errors import CommandError
from webhook.kube.access import Component, guarded
from webhook.kube.config import KubeConfigError, api_client, own_namespace
from webhook.status import observed
from webhook.status.compare import Report, report
from webhook.status.settings import StatusSettings

WRONG = 1


def status(settings: StatusSettings) -> int:
    try:
        api = guarded(api_client(str(settings.kubeconfig) if settings.kubeconfig else None, settings.context), Component.STATUS)
    except KubeConfigError as err:
        raise CommandError(str(err), UNUSABLE) from None
    namespaces = [None] if settings.all_namespaces else list(settings.namespace) or [own_namespace(settings.kubeconfig, settings.context)]
    cluster = observed.read(api, namespaces, settings.name)
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
    api: client.ApiClient, cluster: observed.Cluster, workloads: list[Workload], namespaces: Sequence[str | None], settings: StatusSettings
) -> list[Report]:
    """Each PodCliqueSet's listing against the cluster, the templates of other namespaces its
    claims name read first (when not every namespace was)."""
    check_sizes(workloads, settings.max_items)
    listings = [listing(workload, settings.max_claims_per_owner) for workload in workloads]
    if None not in namespaces:
        elsewhere = {c.template.namespace for item in listings for c in item.claims if isinstance(c.template, ObjectKey)}
        observed.read_templates(api, cluster, sorted(elsewhere - set(namespaces)))
    return [
        report(item, workload.pcs, owners(workload), cluster, settings.max_claims_per_owner)
        for item, workload in zip(listings, workloads, strict=True)
    ]


def document(reports: Sequence[Report]) -> dict[str, Any]:
    """What ``-o json`` and ``-o yaml`` print: each PodCliqueSet's counts, findings and warnings."""
    return {
        "podCliqueSets": [
            {
                "namespace": r.namespace,
                "name": r.name,
                "healthy": r.healthy,
                "claims": {"expected": r.claims, "present": r.present},
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
        lines.append(f"PodCliqueSet {r.namespace}/{r.name}: {r.present} of {r.claims} shared claims, {r.pods} pods: {problems}")
        for finding in r.findings:
            lines.append(f"  {finding.subject}: {finding.message}")
            if finding.event:
                lines.append(f"    last Event: {finding.event}")
        lines += [f"  Warning: {warning}" for warning in r.warnings]
    return "\n".join(lines) + "\n" if lines else ""
