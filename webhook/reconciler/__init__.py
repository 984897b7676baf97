"""The claim reconciler: keeps, for every PodCliqueSet, exactly the shared ResourceClaims its pods
reference (BEHAVIOUR.md §4). The options of ``webhook reconcile`` are here, so that the command line
reads them without loading the Kubernetes client; each is also read from ``WEBHOOK_<OPTION>``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator, model_validator
from pydantic.json_schema import JsonDict

from webhook.core.sharing.makers import ClaimMaking
from webhook.settings import ClaimLimitSettings, ContextSettings, LoggingSettings, Namespaces, Seconds, namespace_name

SECONDS: JsonDict = {"metavar": "SECONDS"}


class ReconcileSettings(ClaimLimitSettings, LoggingSettings, ContextSettings):
    kubeconfig: Path | None = Field(
        None,
        description=(
            "Kubeconfig of the cluster to reconcile. Without it: the in-cluster service account in a "
            "pod (KUBERNETES_SERVICE_HOST set), else KUBECONFIG or ~/.kube/config."
        ),
        json_schema_extra={"metavar": "FILE", "default_text": "in-cluster or default kubeconfig"},
    )
    namespace: Namespaces = Field(
        default_factory=list,
        description="Watch and reconcile PodCliqueSets in this namespace only. Repeatable; comma-separated in the environment.",
        json_schema_extra={"default_text": "all namespaces", "short": "-n", "metavar": "NAMESPACE"},
    )
    workers: int = Field(
        2, ge=1, le=64, json_schema_extra={"metavar": "N"},
        description="PodCliqueSets reconciled at the same time (one worker per PodCliqueSet at a time).",
    )
    claims: ClaimMaking = Field(
        "auto",
        description=(
            "Who makes the shared claims: auto decides for each PodCliqueSet, and the reconciler makes "
            "none where Grove's operator makes them; always: the reconciler, everywhere; never: the "
            "reconciler only observes and reports."
        ),
    )
    claims_grace: Seconds = Field(
        2.0,
        description=(
            "With --claims auto, seconds the reconciler waits for Grove's operator to make a "
            "PodCliqueSet's first claim before making them itself (where nobody has made claims in "
            "its namespace, or Grove's operator has)."
        ),
    )
    resync_period: Seconds = Field(
        300.0, description="Seconds between re-queues of every PodCliqueSet; repairs what no watch event reported."
    )
    backoff_base: Seconds = Field(
        0.5, description="Seconds before the first retry of a failed PodCliqueSet; doubles on each failure."
    )
    backoff_max: Seconds = Field(300.0, description="Longest delay between retries.")
    health_host: str = Field(
        "127.0.0.1", json_schema_extra={"metavar": "HOST"},
        description="Address of the plain-HTTP /healthz, /readyz and /metrics endpoints (0.0.0.0 in a pod).",
    )
    health_port: int = Field(
        8081, ge=0, le=65535, json_schema_extra={"metavar": "PORT"},
        description="Port of /healthz, /readyz and /metrics (0: any free port, logged at start).",
    )
    leader_elect: bool = Field(
        False,
        description=(
            "Reconcile only while holding a coordination.k8s.io Lease, so several replicas are safe. "
            "A replica that loses the lease stops writing and campaigns again with fresh caches."
        ),
    )
    leader_election_namespace: str | None = Field(
        None,
        description="Namespace of the Lease.",
        json_schema_extra={"metavar": "NAMESPACE", "default_text": "the pod's namespace, else the kubeconfig context's, else default"},
    )
    leader_election_id: str = Field(
        "grove-sharing-reconciler", min_length=1, description="Name of the Lease.", json_schema_extra={"metavar": "NAME"}
    )
    lease_duration: int = Field(
        15, ge=2, json_schema_extra=SECONDS,
        description="Seconds a standby waits after the last renewal before taking the lease over.",
    )
    renew_deadline: int = Field(
        10, ge=2, json_schema_extra=SECONDS,
        description="Seconds the leader keeps retrying a renewal before it gives the lease up.",
    )
    retry_period: int = Field(
        2, ge=1, description="Seconds between attempts to acquire or renew the lease.", json_schema_extra=SECONDS
    )

    @field_validator("leader_election_namespace")
    @classmethod
    def _one_namespace(cls, value: str | None) -> str | None:
        return namespace_name(value) if value else None

    @model_validator(mode="after")
    def _lease_timing(self) -> ReconcileSettings:
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("--lease-duration must be longer than --renew-deadline")
        if self.renew_deadline <= 1.2 * self.retry_period:
            raise ValueError("--renew-deadline must be longer than 1.2 x --retry-period")
        if self.backoff_max < self.backoff_base:
            raise ValueError("--backoff-max must not be shorter than --backoff-base")
        return self
