"""``webhook claims`` output: tables for a person, or one JSON or YAML document for a script.

The document is ``{"claims": [...], "pods": [...], "podCliqueSets": [...]}`` over every PodCliqueSet
given (the shape is DECISIONS.md §1's), the last with each PodCliqueSet's warnings, denial and notes;
the tables give, per PodCliqueSet, a heading with its counts, its claims and its pods with their
claims in the order they are injected. Warnings, notes and denials are also lines for stderr, as
kubectl shows admission warnings, so that a script reading stdout sees them either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson
import yaml

from webhook.claims.listing import ListedClaim, Listing
from webhook.core.model.meta import ObjectKey

NONE = "-"


def _template(claim: ListedClaim) -> dict[str, str | None]:
    template = claim.template
    namespace = template.namespace if isinstance(template, ObjectKey) else None
    return {"name": template.name, "namespace": namespace}


def document(listings: Sequence[Listing]) -> dict[str, Any]:
    claims: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    for listing in listings:
        for listed in listing.claims:
            claim = listed.claim
            claims.append(
                {
                    "name": claim.name,
                    "namespace": listed.namespace,
                    "scope": claim.entry.scope,
                    "replica": claim.replica,
                    "owner": {"kind": claim.owner.kind, "name": claim.owner.name},
                    "template": _template(listed),
                }
            )
        pods.extend({"podClique": pod.clique, "podIndex": pod.index, "claims": pod.claims} for pod in listing.pods)
    said = [
        {"namespace": item.namespace, "name": item.name, "warnings": item.warnings, "denial": item.denial, "notes": item.notes}
        for item in listings
    ]
    return {"claims": claims, "pods": pods, "podCliqueSets": said}


def as_json(listings: Sequence[Listing]) -> bytes:
    return orjson.dumps(document(listings), option=orjson.OPT_INDENT_2) + b"\n"


def as_yaml(listings: Sequence[Listing]) -> str:
    return yaml.safe_dump(document(listings), sort_keys=False, allow_unicode=True)


def _columns(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Left-aligned columns three spaces apart, as kubectl prints them."""
    table = [list(header), *map(list, rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return ["   ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in table]


def _claim_row(listed: ListedClaim) -> list[str]:
    claim, template = listed.claim, listed.template
    shown = str(template) if isinstance(template, ObjectKey) else template.name
    replica = NONE if claim.replica is None else str(claim.replica)
    return [claim.name, claim.entry.scope, replica, f"{claim.owner.kind}/{claim.owner.name}", shown]


def _pod_rows(listing: Listing) -> Iterable[list[str]]:
    for pod in listing.pods:
        first, *rest = pod.claims or ["<none>"]
        yield [pod.clique, str(pod.index), first]
        yield from (["", "", name] for name in rest)


def as_table(listings: Sequence[Listing]) -> str:
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
    """The lines for stderr: notes on the objects given, the webhook's warnings (as kubectl shows
    admission warnings), and its denial."""
    lines = []
    for listing in listings:
        pcs = f"PodCliqueSet {listing.namespace}/{listing.name}"
        lines += [f"Note: {note}" for note in listing.notes]
        lines += [f"Warning: {pcs}: {warning}" for warning in listing.warnings]
        if listing.denial:
            lines.append(f"Error: {pcs} is denied by the validating webhook: {listing.denial}")
    return lines
