"""``webhook claims FILE...``: which ResourceClaims a PodCliqueSet makes and which claims each pod gets.

Reads PodCliqueSet manifests (and, when given, their PodCliqueScalingGroups and PodCliques for the
replica counts they have now; otherwise the counts Grove starts with) and prints every claim that
must exist and every pod's claims, computed by the functions the webhooks and the reconciler use
(``claims.listing``): tables for a person, or one JSON or YAML document for a script,
``{"claims": [...], "pods": [...], "podCliqueSets": [...]}`` (DECISIONS.md §1). Warnings and
denials are the validating webhook's (with ``--strict``, those of ``serve --strict``), in the
document and, as kubectl shows admission warnings, on stderr, so that a script reading stdout sees
them either way.

Exit codes: 0; 1 when the validating webhook would deny a PodCliqueSet (everything is printed all
the same); 2 with one line for unusable input (a file that cannot be read or parsed, no
PodCliqueSet, a child of none of them, more than ``--max-items`` to list).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson
import yaml

from webhook.claims.listing import ListedClaim, Listing, check_sizes, listing
from webhook.claims.settings import ClaimsSettings
from webhook.claims.workloads import read
from webhook.core.model.meta import ObjectKey

DENIED = 1


def claims(settings: ClaimsSettings) -> int:
    workloads = read(settings.files)
    check_sizes(workloads, settings.max_items)
    listings = [listing(workload, settings.max_claims_per_owner, settings.strict) for workload in workloads]
    write(document(listings), settings.output, lambda: as_table(listings))
    for line in diagnostics(listings):
        print(line, file=sys.stderr)
    return DENIED if any(item.denial for item in listings) else 0


def write(document: dict[str, Any], output: str, text: Callable[[], str]) -> None:
    """``document`` as ``-o json`` or ``-o yaml`` asks, else ``text()``, on stdout (for ``claims``
    and ``status`` alike)."""
    if output == "json":
        sys.stdout.buffer.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    elif output == "yaml":
        sys.stdout.write(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    else:
        sys.stdout.write(text())
    sys.stdout.flush()


def _claim(listed: ListedClaim) -> dict[str, Any]:
    claim, template = listed.claim, listed.template
    return {
        "name": claim.name,
        "namespace": listed.namespace,
        "scope": claim.entry.scope,
        "replica": claim.replica,
        "owner": {"kind": claim.owner.kind, "name": claim.owner.name},
        "template": {"name": template.name, "namespace": template.namespace if isinstance(template, ObjectKey) else None},
    }


def document(listings: Sequence[Listing]) -> dict[str, Any]:
    return {
        "claims": [_claim(listed) for item in listings for listed in item.claims],
        "pods": [{"podClique": pod.clique, "podIndex": pod.index, "claims": pod.claims} for item in listings for pod in item.pods],
        "podCliqueSets": [
            {"namespace": item.namespace, "name": item.name, "warnings": item.warnings, "denial": item.denial, "notes": item.notes}
            for item in listings
        ],
    }


def _columns(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Left-aligned columns three spaces apart, as kubectl prints them."""
    table = [list(header), *map(list, rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return ["   ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in table]


def _claim_row(listed: ListedClaim) -> list[str]:
    claim, template = listed.claim, listed.template
    replica = "-" if claim.replica is None else str(claim.replica)
    shown = str(template) if isinstance(template, ObjectKey) else template.name
    return [claim.name, claim.entry.scope, replica, f"{claim.owner.kind}/{claim.owner.name}", shown]


def _pod_rows(listing: Listing) -> Iterable[list[str]]:
    for pod in listing.pods:
        first, *rest = pod.claims or ["<none>"]
        yield [pod.clique, str(pod.index), first]
        yield from (["", "", name] for name in rest)


def as_table(listings: Sequence[Listing]) -> str:
    """Per PodCliqueSet, a heading with its counts, its claims, and its pods with their claims in
    the order they are injected."""
    lines: list[str] = []
    for listing in listings:
        counts = "the objects given" if listing.live else "the spec"
        if lines:
            lines.append("")
        lines.append(
            f"PodCliqueSet {listing.namespace}/{listing.name}: {len(listing.claims)} ResourceClaims, "
            f"{len(listing.pods)} pods (replica counts of {counts})"
        )
        if listing.claims:
            lines += ["", *_columns(("CLAIM", "SCOPE", "OWNER REPLICA", "OWNER", "TEMPLATE"), map(_claim_row, listing.claims))]
        if listing.pods:
            lines += ["", *_columns(("PODCLIQUE", "POD INDEX", "CLAIMS"), _pod_rows(listing))]
    return "\n".join(lines) + "\n"


def diagnostics(listings: Sequence[Listing]) -> list[str]:
    """The lines for stderr: notes on the objects given, the webhook's warnings, and its denial."""
    lines = []
    for listing in listings:
        pcs = f"PodCliqueSet {listing.namespace}/{listing.name}"
        lines += [f"Note: {note}" for note in listing.notes]
        lines += [f"Warning: {pcs}: {warning}" for warning in listing.warnings]
        if listing.denial:
            lines.append(f"Error: {pcs} is denied by the validating webhook: {listing.denial}")
    return lines
