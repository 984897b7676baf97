"""The options of ``webhook claims``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from webhook.options import ClaimLimitSettings


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
