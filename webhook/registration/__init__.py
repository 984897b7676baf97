"""The release's webhook configurations as objects of the API (``configurations``): their caBundle
kept by the certificate controller, and their removal by ``webhook unregister`` (the chart's
pre-delete hook), whose options are here so that the command line reads them without loading the
Kubernetes client."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from webhook.settings import ContextSettings, LoggingSettings, Seconds


class UnregisterSettings(LoggingSettings, ContextSettings):
    webhook_configuration: str = Field(
        description=(
            "Name of the ValidatingWebhookConfiguration and the MutatingWebhookConfiguration to delete "
            "(the chart names both after the release)."
        ),
        json_schema_extra={"metavar": "NAME"},
    )
    kubeconfig: Path | None = Field(
        None,
        description=(
            "Kubeconfig of the cluster. Without it: the in-cluster service account in a pod "
            "(KUBERNETES_SERVICE_HOST set), else KUBECONFIG or ~/.kube/config."
        ),
        json_schema_extra={"metavar": "FILE", "default_text": "in-cluster or default kubeconfig"},
    )
    timeout: Seconds = Field(
        60.0,
        description=(
            "Seconds to keep trying while the API server cannot be reached or answers with a server "
            "error; a refusal (such as 403) ends the command at once."
        ),
    )
