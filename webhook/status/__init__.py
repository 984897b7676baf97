"""``webhook status`` (also ``kubectl grove-sharing status``): "why is my pod Pending?" in one command.
Its options are here, so that the command line reads them without loading the Kubernetes client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from webhook.settings import ClaimLimitSettings, ContextSettings, Namespaces


class StatusSettings(ClaimLimitSettings, ContextSettings):
    name: str | None = Field(
        None,
        description="The PodCliqueSet to report on; all of the namespaces read when not given.",
        json_schema_extra={"metavar": "PODCLIQUESET", "positional": True},
    )
    kubeconfig: Path | None = Field(
        None,
        description="Kubeconfig of the cluster; without it KUBECONFIG or ~/.kube/config, as kubectl.",
        json_schema_extra={"metavar": "FILE", "default_text": "KUBECONFIG or ~/.kube/config"},
    )
    namespace: Namespaces = Field(
        default_factory=list,
        description="Read this namespace. Repeatable; comma-separated in the environment.",
        json_schema_extra={"default_text": "the context's namespace", "short": "-n", "metavar": "NAMESPACE"},
    )
    all_namespaces: bool = Field(
        False, description="Read every namespace.", json_schema_extra={"short": "-A"}
    )
    output: Literal["table", "json", "yaml"] = Field(
        "table",
        description="Lines for people, or one JSON or YAML document for scripts.",
        json_schema_extra={"short": "-o"},
    )
    max_items: int = Field(
        100_000,
        ge=1,
        description=(
            "Most claims plus pods expected, all PodCliqueSets together: a spec that makes more is "
            "refused with its counts rather than compared."
        ),
        json_schema_extra={"metavar": "N"},
    )

    @model_validator(mode="after")
    def _one_scope(self) -> StatusSettings:
        if self.all_namespaces and self.namespace:
            raise ValueError("--all-namespaces and --namespace cannot be given together")
        return self
