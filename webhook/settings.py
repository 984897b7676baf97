"""The options of every command, as typed settings models.

Each model is the one table of its command's options: ``webhook.options`` generates the argparse
arguments (with the environment variable and default in the help) from it, and pydantic-settings
reads the same fields from the environment. The command line wins over the environment, which wins
over the default.

List options are repeatable on the command line; in the environment, paths are separated by the OS
path separator (``:`` on Linux, as in ``KUBECONFIG``) and other lists by commas.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import NoDecode

from webhook.certificate_settings import CertificateSettings
from webhook.options import KiB, MiB, ClaimLimitSettings, ContextSettings, LoggingSettings, Namespaces, split_list

class DecisionSettings(ClaimLimitSettings):
    """What changes a webhook's decision: shared by ``serve`` and ``review``."""

    objects: Annotated[list[Path], NoDecode] = Field(
        default_factory=list,
        description=(
            "A YAML or JSON manifest file, or a directory of them, with PodCliqueSets and related "
            "objects for the embedded store (used when no cluster is configured). Repeatable."
        ),
        json_schema_extra={"metavar": "PATH", "default_text": "none"},
    )
    strict: bool = Field(
        False,
        description=(
            "Deny, rather than warn about, claim names pods cannot use, claim-name collisions and "
            "filters that match no pod (and scales that make such names). Templates that do not exist "
            "are only ever warned about."
        ),
    )
    on_missing_pcs: Literal["deny", "allow"] = Field(
        "deny",
        description=(
            "What the pod webhook does with a Grove pod whose PodCliqueSet cannot be found: deny it, "
            "or admit it unchanged with a warning."
        ),
    )

    @field_validator("objects", mode="before")
    @classmethod
    def _split_paths(cls, value: Any) -> Any:
        return split_list(value, os.pathsep)

    @property
    def uses_cluster(self) -> bool:
        """Whether the store is the cluster's (list+watch) rather than the embedded one (files)."""
        return False


class ServeSettings(DecisionSettings, LoggingSettings, CertificateSettings, ContextSettings):
    host: str = Field("127.0.0.1", description="Address to listen on.")
    port: int = Field(8443, ge=1, le=65535, description="HTTPS port to listen on.")
    metrics_port: int = Field(
        0,
        ge=0,
        le=65535,
        description=(
            "HTTPS port of /metrics on a listener of its own (the same certificate), so that scrapes "
            "and the webhooks can be reached, and allowed by a NetworkPolicy, apart. 0: /metrics is "
            "served on --port."
        ),
        json_schema_extra={"metavar": "PORT"},
    )
    tls_cert: Path = Field(
        Path("certs/tls.crt"),
        description="Serving certificate (PEM); reloaded when the file changes.",
        json_schema_extra={"metavar": "FILE"},
    )
    tls_key: Path = Field(
        Path("certs/tls.key"),
        description="Private key of the serving certificate (PEM); reloaded with it.",
        json_schema_extra={"metavar": "FILE"},
    )
    keep_alive_timeout: float = Field(
        120.0,
        gt=0,
        description=(
            "Seconds an idle connection is kept open. The API server keeps idle webhook "
            "connections for 90 s and never resumes TLS sessions, so a shorter timeout turns most "
            "calls into full handshakes."
        ),
        json_schema_extra={"metavar": "SECONDS"},
    )
    header_timeout: float = Field(
        10.0,
        gt=0,
        description=(
            "Seconds a connection has, from its TLS handshake (or, kept alive, from the first byte of "
            "its next request), to deliver a complete request head; a slower one is closed."
        ),
        json_schema_extra={"metavar": "SECONDS"},
    )
    max_header_bytes: int = Field(
        1 * MiB,
        ge=1024,
        description=(
            "Largest request head (request target and header lines) accepted; a longer one is answered "
            "431 and its connection closed, as Go's net/http does past MaxHeaderBytes. A connection "
            "holding more than this beyond the bodies it has delivered (a head that does not end, a "
            "chunked body's trailers) is closed."
        ),
        json_schema_extra={"metavar": "BYTES"},
    )
    max_header_line_bytes: int = Field(
        64 * KiB,
        ge=256,
        description="Largest single header line (name and value) accepted; a longer one is answered 431.",
        json_schema_extra={"metavar": "BYTES"},
    )
    max_headers: int = Field(
        100,
        ge=8,
        description="Most header lines a request may have; more are answered 431.",
        json_schema_extra={"metavar": "N"},
    )
    kubeconfig: Path | None = Field(
        None,
        description=(
            "Use the cluster store (list+watch of PodCliqueSets) with this kubeconfig. Without it, "
            "the cluster store is used in a pod (KUBERNETES_SERVICE_HOST set) when --objects is not "
            "given."
        ),
        json_schema_extra={"metavar": "FILE", "default_text": "none"},
    )
    namespace: Namespaces = Field(
        default_factory=list,
        description="Limit the cluster store to this namespace. Repeatable; comma-separated in the environment.",
        json_schema_extra={"default_text": "all namespaces", "short": "-n", "metavar": "NAMESPACE"},
    )
    max_body_bytes: int = Field(
        8 * MiB,
        gt=0,
        description="Largest request body accepted; larger ones are answered 413.",
        json_schema_extra={"metavar": "BYTES"},
    )
    body_timeout: float = Field(
        30.0,
        gt=0,
        description=(
            "Seconds a request body may take to arrive in full; a slower one is answered 408. The API "
            "server sends a review at once and waits 30 s at most for the answer."
        ),
        json_schema_extra={"metavar": "SECONDS"},
    )
    max_held_bytes: int = Field(
        64 * MiB,
        ge=1 * MiB,
        description=(
            "Most bytes the server holds for its clients at once, all connections together: request "
            "heads and bodies being read, and answers not yet taken by their clients. A request that "
            "would go past it is answered 503 with Retry-After (a head still arriving: its connection "
            "is closed); the last quarter is kept for requests of at most 256 KiB, so that large ones "
            "cannot crowd out ordinary reviews."
        ),
        json_schema_extra={"metavar": "BYTES"},
    )
    write_timeout: float = Field(
        10.0,
        gt=0,
        description=(
            "Seconds an answer may wait for its client to take it once it has backed up in the "
            "server's buffers (the client reads too slowly, or not at all); then the connection is "
            "dropped and its buffers freed. Also bounds the TLS close of a connection its answer closed."
        ),
        json_schema_extra={"metavar": "SECONDS"},
    )
    access_log: bool = Field(False, description="Log every HTTP request.")
    cert_reload_interval: float = Field(
        2.0,
        gt=0,
        description="Seconds between checks of the certificate and key files for changes.",
        json_schema_extra={"metavar": "SECONDS"},
    )
    shutdown_delay: float = Field(
        0.0,
        ge=0,
        description=(
            "Seconds to keep accepting connections after SIGTERM, with /readyz failing and every "
            "response closing its connection, so that load balancers and kept-alive clients move to "
            "other replicas before the listener closes."
        ),
        json_schema_extra={"metavar": "SECONDS"},
    )
    drain_timeout: float = Field(
        10.0,
        gt=0,
        description=(
            "Seconds the drain may take once the listener has closed: requests under way are "
            "answered; whatever is left then is cut off, so that no client can hold the exit."
        ),
        json_schema_extra={"metavar": "SECONDS"},
    )

    template_authorization: Literal["enforce", "warn", "off"] = Field(
        "enforce",
        description=(
            "With the cluster store, a PodCliqueSet CREATE naming a ResourceClaimTemplate of another "
            "namespace needs its user to be allowed to get that template (a SubjectAccessReview): "
            "enforce denies it otherwise, or when the API server cannot tell; warn admits it with a "
            "warning; off does not ask. Always off with the embedded store."
        ),
    )

    @model_validator(mode="after")
    def _a_body_fits_the_budget(self) -> ServeSettings:
        """A body may hold three quarters of the budget (``webhook.server.budget``): a larger limit
        would answer bodies it accepts 503 for ever rather than 413."""
        if self.max_body_bytes > self.max_held_bytes - self.max_held_bytes // 4:
            raise ValueError(
                f"--max-held-bytes ({self.max_held_bytes}) must be at least 4/3 of --max-body-bytes "
                f"({self.max_body_bytes}): one large body may hold three quarters of it"
            )
        return self

    @property
    def uses_cluster(self) -> bool:
        """With a kubeconfig, or in a pod when no manifests are given."""
        if self.kubeconfig is not None:
            return True
        return not self.objects and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


class ReviewSettings(DecisionSettings):
    file: str = Field(
        description="The AdmissionReview to decide: a JSON file, or - for standard input.",
        json_schema_extra={"metavar": "FILE", "positional": True},
    )
    output: Literal["json", "yaml"] = Field(
        "json",
        description="The response AdmissionReview as the server's bytes (JSON), or as YAML to read.",
        json_schema_extra={"short": "-o"},
    )


