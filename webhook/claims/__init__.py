"""``webhook claims FILE...``: which ResourceClaims PodCliqueSet manifests make and which claims
each pod gets (DECISIONS.md §1), as tables or one JSON or YAML document. The validating webhook's
warnings and denial are in the document and, as kubectl shows admission warnings, on stderr, so
that a script reading stdout sees them either way.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import orjson
import yaml
from pydantic import Field

from webhook.claims.listing import Listing, check_sizes, listing, read
from webhook.core.model.meta import ObjectKey
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.sharing.desired import DesiredClaim, template_source
from webhook.settings import ClaimLimitSettings

DENIED = 1


class ClaimsSettings(ClaimLimitSettings):
    """The limit per owner is the reconciler's, so that what is listed is what it would make."""

    files: list[Path] = Field(
        description=(
            "YAML or JSON manifests, or directories of them: PodCliqueSets and, for current replica "
            "counts, their PodCliqueScalingGroups and PodCliques."
        ),
        json_schema_extra={"metavar": "FILE", "positional": True},
    )
    output: Literal["table", "json", "yaml"] = Field(
        "table",
        description=(
            "Tables for people (warnings and the denial on stderr), or one JSON or YAML document for "
            "scripts, which carries them too."
        ),
        json_schema_extra={"short": "-o"},
    )
    strict: bool = Field(
        False,
        description=(
            "Show what serve --strict (the chart's webhooks.strict) would deny: the warnings about "
            "claim names and filters become part of the denial."
        ),
    )
    max_items: int = Field(
        10_000,
        ge=1,
        description=(
            "Most claims plus pods listed, all PodCliqueSets together: a spec that makes more is "
            "refused with its counts rather than printed."
        ),
        json_schema_extra={"metavar": "N"},
    )


def claims(settings: ClaimsSettings) -> int:
    workloads = read(settings.files)
    check_sizes(workloads, settings.max_items)
    listings = [listing(workload, settings.max_claims_per_owner, settings.strict) for workload in workloads]
    write(document(listings), settings.output, lambda: as_table(listings))
    for item in listings:
        pcs = f"PodCliqueSet {item.pcs.key}"
        for note in item.notes:
            print(f"Note: {note}", file=sys.stderr)
        for warning in item.warnings:
            print(f"Warning: {pcs}: {warning}", file=sys.stderr)
        if item.denial:
            print(f"Error: {pcs} is denied by the validating webhook: {item.denial}", file=sys.stderr)
    return DENIED if any(item.denial for item in listings) else 0


def write(document: dict[str, Any], output: str, text: Callable[[], str]) -> None:
    """``document`` as ``-o json`` or ``-o yaml`` asks, else ``text()`` (for ``status`` too)."""
    if output == "json":
        sys.stdout.buffer.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    elif output == "yaml":
        sys.stdout.write(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    else:
        sys.stdout.write(text())
    sys.stdout.flush()


def _claim(claim: DesiredClaim, pcs: PodCliqueSet) -> dict[str, Any]:
    template = template_source(pcs, claim.entry)
    return {
        "name": claim.name,
        "namespace": pcs.namespace,
        "scope": claim.entry.scope,
        "replica": claim.replica,
        "owner": {"kind": claim.owner.kind, "name": claim.owner.name},
        "template": {"name": template.name, "namespace": template.namespace if isinstance(template, ObjectKey) else None},
    }


def document(listings: Sequence[Listing]) -> dict[str, Any]:
    return {
        "claims": [_claim(claim, item.pcs) for item in listings for claim in item.claims],
        "pods": [{"podClique": pod.clique, "podIndex": pod.index, "claims": pod.claims} for item in listings for pod in item.pods],
        "podCliqueSets": [
            {"namespace": item.pcs.namespace, "name": item.pcs.name, "warnings": item.warnings, "denial": item.denial, "notes": item.notes}
            for item in listings
        ],
    }


def _columns(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Columns as kubectl prints them."""
    table = [list(header), *map(list, rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return ["   ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in table]


def _claim_row(claim: DesiredClaim, pcs: PodCliqueSet) -> list[str]:
    template = template_source(pcs, claim.entry)
    replica = "-" if claim.replica is None else str(claim.replica)
    shown = str(template) if isinstance(template, ObjectKey) else template.name
    return [claim.name, claim.entry.scope, replica, f"{claim.owner.kind}/{claim.owner.name}", shown]


def _pod_rows(listing: Listing) -> Iterable[list[str]]:
    for pod in listing.pods:
        first, *rest = pod.claims or ["<none>"]
        yield [pod.clique, str(pod.index), first]
        yield from (["", "", name] for name in rest)


def as_table(listings: Sequence[Listing]) -> str:
    """Per PodCliqueSet, its counts, claims, and pods with their claims in the order injected."""
    lines: list[str] = []
    for listing in listings:
        counts = "the objects given" if listing.live else "the spec"
        if lines:
            lines.append("")
        lines.append(
            f"PodCliqueSet {listing.pcs.key}: {len(listing.claims)} ResourceClaims, "
            f"{len(listing.pods)} pods (replica counts of {counts})"
        )
        if listing.claims:
            lines += ["", *_columns(("CLAIM", "SCOPE", "OWNER REPLICA", "OWNER", "TEMPLATE"), (_claim_row(claim, listing.pcs) for claim in listing.claims))]
        if listing.pods:
            lines += ["", *_columns(("PODCLIQUE", "POD INDEX", "CLAIMS"), _pod_rows(listing))]
    return "\n".join(lines) + "\n"
