"""``webhook status`` output: a few lines per PodCliqueSet for a person, or one JSON or YAML
document for a script (``{"podCliqueSets": [...]}``, each with its counts, findings and warnings)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import orjson
import yaml

from webhook.status.findings import Finding, Report


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "problem": str(finding.problem),
        "object": finding.subject,
        "message": finding.message,
        "lastEvent": asdict(finding.event) if finding.event else None,
    }


def document(reports: Sequence[Report]) -> dict[str, Any]:
    return {
        "podCliqueSets": [
            {
                "namespace": r.namespace,
                "name": r.name,
                "healthy": r.healthy,
                "claims": {"expected": r.claims, "present": r.present},
                "pods": r.pods,
                "findings": [_finding(f) for f in r.findings],
                "warnings": r.warnings,
            }
            for r in reports
        ]
    }


def as_json(reports: Sequence[Report]) -> bytes:
    return orjson.dumps(document(reports), option=orjson.OPT_INDENT_2) + b"\n"


def as_yaml(reports: Sequence[Report]) -> str:
    return yaml.safe_dump(document(reports), sort_keys=False, allow_unicode=True)


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
