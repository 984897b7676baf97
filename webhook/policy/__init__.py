"""``webhook policy``: the validating webhook's decisions on PodCliqueSets as a
ValidatingAdmissionPolicy, generated from the rules, texts and Go types the webhook uses
(docs/policy.md). Its options are here, so that the command line reads them without writing the CEL.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from webhook.settings import CommandSettings, Namespaces

DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


class PolicySettings(CommandSettings):
    name: str = Field(
        "grove-sharing-webhook",
        description="Name of the ValidatingAdmissionPolicy and of its binding.",
    )
    failure_policy: Literal["Fail", "Ignore"] = Field(
        "Fail",
        description=(
            "What the API server does with a PodCliqueSet whose check cannot be completed (a CEL cost "
            "budget exceeded): Fail denies it, Ignore admits it unchecked."
        ),
    )
    exclude_namespace: Namespaces = Field(
        default_factory=lambda: ["kube-system"],
        description=(
            "A namespace whose PodCliqueSets the binding leaves alone. Repeatable; comma-separated in "
            "the environment (empty for none)."
        ),
        json_schema_extra={"metavar": "NAMESPACE"},
    )
    output: Literal["yaml", "json"] = Field(
        "yaml",
        description="Two YAML documents, or one JSON List (the form the chart embeds).",
        json_schema_extra={"short": "-o"},
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if len(value) > 253 or not DNS_SUBDOMAIN.fullmatch(value):
            raise ValueError("must be a DNS subdomain (lower case letters, digits, '-' and '.')")
        return value
