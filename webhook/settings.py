"""Every command's options, as typed settings models: those several commands share, declared once
each (one option, one variable, wherever it appears), and those of ``serve``, ``review`` and
``certs``.

Each command's model is the one table of its options (``webhook.cli`` makes the command line of
it); the command line wins over the environment, which wins over the default. List options are
repeatable on the command line; in the environment, paths are separated by the OS path separator
(``:`` on Linux, as in ``KUBECONFIG``) and other lists by commas.
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from webhook.core.sharing.desired import MAX_CLAIMS_PER_OWNER

KiB = 1024
MiB = 1024 * KiB

MAX_CONNECTIONS = 1000
"""At about 34 KiB for each idle TLS connection (docs/PERFORMANCE.md), 1,000 take 34 MiB: with the
64 MiB of ``--max-held-bytes``, the process and a store of 5,000 PodCliqueSets, within the chart's
256Mi limit."""


def split_list(value: Any, separator: str) -> Any:
    """An environment string becomes a list; lists from the command line pass through."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(separator) if part.strip()]
    return value


_NAMESPACE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def namespace_name(value: str) -> str:
    """A namespace name (a DNS label), refused here rather than by the first request naming it."""
    if not _NAMESPACE_NAME.fullmatch(value):
        raise ValueError(f"{value!r} is not one namespace name (a DNS label: lower-case letters, digits and '-')")
    return value


Commas = BeforeValidator(lambda value: split_list(value, ","))
Namespaces = Annotated[list[str], NoDecode, Commas, AfterValidator(lambda values: list(dict.fromkeys(map(namespace_name, values))))]
"""A repeatable namespace option: comma-separated in the environment, repeats dropped."""

Seconds = Annotated[float, Field(gt=0, json_schema_extra={"metavar": "SECONDS"})]
Bytes = Annotated[int, Field(json_schema_extra={"metavar": "BYTES"})]
"""Option types whose help names their unit (seconds are more than 0)."""


class CommandSettings(BaseSettings):
    """Base of every command's settings: environment variables are ``WEBHOOK_<OPTION>``."""

    model_config = SettingsConfigDict(env_prefix="WEBHOOK_", extra="forbid", frozen=True)


class LoggingSettings(CommandSettings):
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "info", description="Least severe log level written."
    )
    log_format: Literal["json", "text"] = Field(
        "text", description="Log lines as JSON objects (one per line) or as plain text."
    )


class ContextSettings(CommandSettings):
    """Of every command that reads a cluster: the kubeconfig context, as ``kubectl --context``."""

    context: str | None = Field(
        None,
        description="The kubeconfig context to use (a kubeconfig is then read even in a pod).",
        json_schema_extra={"metavar": "NAME", "default_text": "the current context"},
    )


class ClaimLimitSettings(CommandSettings):
    """The reconciler's limit per owner, which the validating webhook warns about: one option for
    both, so that a pod running both sees one value."""

    max_claims_per_owner: int = Field(
        MAX_CLAIMS_PER_OWNER,
        ge=1,
        description=(
            "Most claims the reconciler makes for one owner (a PodCliqueSet, scaling group or PodClique): "
            "an owner whose sharing needs more gets the first N in Grove's order and a Warning Event, "
            "and the validating webhook warns about it at admission."
        ),
        json_schema_extra={"metavar": "N"},
    )


UNITS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|d|h|m|s)")


def parse_duration(value: Any) -> Any:
    """Seconds in a duration as Go and cert-manager write them (``2160h``, ``1h30m``), or in days
    (``90d``), so that a lifetime reads the same in the chart, here and in cert-manager; a number
    of seconds passes through."""
    if not isinstance(value, str) or value.strip().replace(".", "", 1).isdigit():
        return value
    compact = value.strip()
    parts = _PART.findall(compact)
    if not compact or "".join(number + unit for number, unit in parts) != compact:
        raise ValueError(f"{value!r} is not a duration such as 2160h, 90d, 1h30m or 45s")
    return sum(float(number) * UNITS[unit] for number, unit in parts)


DNS_NAME = re.compile(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*")


def _valid_hosts(hosts: list[str]) -> list[str]:
    for host in hosts:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            if not DNS_NAME.fullmatch(host):
                raise ValueError(f"{host!r} is neither an IP address nor a DNS name") from None
    return hosts


Hosts = Annotated[list[str], NoDecode, Commas, AfterValidator(_valid_hosts)]
"""DNS names and IP addresses, comma-separated on the command line and in the environment."""

SHORTEST_VALIDITY = 20.0
"""Seconds: a third of it covers two checks and the two seconds a replica waits for a new CA to be
trusted before it serves a certificate signed by it."""


class DecisionSettings(ClaimLimitSettings):
    """What changes a webhook's decision: shared by ``serve`` and ``review``."""

    objects: Annotated[list[Path], NoDecode, BeforeValidator(lambda value: split_list(value, os.pathsep))] = Field(
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


class CertificateSettings(CommandSettings):
    """The certificate controller of ``serve`` (controller mode, the chart's default)."""

    cert_secret: str | None = Field(
        None,
        description=(
            "Keep the serving certificate in this Secret: make a CA and a certificate when it holds "
            "none, renew both two thirds through their lifetime, write the CAs into the caBundle of "
            "the --webhook-configuration, and serve the Secret's certificate, written to --tls-cert "
            "and --tls-key (with ca.crt beside them), once they trust its CA. Without it, --tls-cert "
            "and --tls-key are served as found."
        ),
        json_schema_extra={"metavar": "NAME", "default_text": "none"},
    )
    cert_secret_namespace: str | None = Field(
        None,
        description="Namespace of --cert-secret.",
        json_schema_extra={"metavar": "NAMESPACE", "default_text": "the pod's namespace, else the kubeconfig context's, else default"},
    )
    webhook_configuration: str | None = Field(
        None,
        description=(
            "Name of the ValidatingWebhookConfiguration and the MutatingWebhookConfiguration whose "
            "caBundle --cert-secret keeps (the chart names both after the release)."
        ),
        json_schema_extra={"metavar": "NAME", "default_text": "none"},
    )
    validating_webhook: bool = Field(
        True,
        description=(
            "Whether the release has the ValidatingWebhookConfiguration of --webhook-configuration: "
            "without it (a ValidatingAdmissionPolicy decides PodCliqueSets, the chart's validation.mode "
            "policy) --cert-secret keeps the caBundle of the MutatingWebhookConfiguration alone."
        ),
    )
    cert_hosts: Hosts = Field(
        default_factory=list,
        description="Comma-separated DNS names and IP addresses the certificates of --cert-secret are valid for.",
        json_schema_extra={"metavar": "HOSTS", "comma_list": True, "default_text": "none"},
    )
    cert_validity: Annotated[float, BeforeValidator(parse_duration)] = Field(
        90 * 86400.0,
        gt=0,
        description=(
            "Lifetime of each CA and certificate of --cert-secret (2160h, 90d, 1h30m, 45s); both are "
            "renewed two thirds through it."
        ),
        json_schema_extra={"metavar": "DURATION", "default_text": "2160h"},
    )
    cert_check_interval: Seconds = Field(
        10.0,
        description=(
            "Seconds between checks of --cert-secret and of the webhook configurations (sooner while a "
            "check fails or a new certificate waits for its CA to be trusted)."
        ),
    )

    @model_validator(mode="after")
    def _controller_complete(self) -> CertificateSettings:
        if self.cert_secret is None:
            return self
        if not self.webhook_configuration:
            raise ValueError("--cert-secret needs --webhook-configuration: the configurations that must trust its CA")
        if not self.cert_hosts:
            raise ValueError("--cert-secret needs --cert-hosts: the names the API server calls the webhook at")
        if self.cert_validity < max(SHORTEST_VALIDITY, 10 * self.cert_check_interval):
            raise ValueError(
                f"--cert-validity ({self.cert_validity:g} s) must be at least {SHORTEST_VALIDITY:g} s and 10 times "
                f"--cert-check-interval ({self.cert_check_interval:g} s): a renewal leaves the last third of it for "
                "every replica to see the new CA trusted and move on"
            )
        return self


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
    keep_alive_timeout: Seconds = Field(
        120.0,
        description=(
            "Seconds an idle connection is kept open. The API server keeps idle webhook "
            "connections for 90 s and never resumes TLS sessions, so a shorter timeout turns most "
            "calls into full handshakes."
        ),
    )
    header_timeout: Seconds = Field(
        10.0,
        description=(
            "Seconds a connection has, from its TLS handshake (or, kept alive, from the first byte of "
            "its next request), to deliver a complete request head; a slower one is closed."
        ),
    )
    max_header_bytes: Bytes = Field(
        1 * MiB,
        ge=1024,
        description=(
            "Largest request head (request target and header lines) accepted; a longer one is answered "
            "431 and its connection closed, as Go's net/http does past MaxHeaderBytes. A connection "
            "holding more than this beyond the bodies it has delivered (a head that does not end, a "
            "chunked body's trailers) is closed."
        ),
    )
    max_header_line_bytes: Bytes = Field(
        64 * KiB,
        ge=256,
        description="Largest single header line (name and value) accepted; a longer one is answered 431.",
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
    max_body_bytes: Bytes = Field(
        8 * MiB,
        gt=0,
        description="Largest request body accepted; larger ones are answered 413.",
    )
    body_timeout: Seconds = Field(
        30.0,
        description=(
            "Seconds a request body may take to arrive in full; a slower one is answered 408. The API "
            "server sends a review at once and waits 30 s at most for the answer."
        ),
    )
    max_held_bytes: Bytes = Field(
        64 * MiB,
        ge=1 * MiB,
        description=(
            "Most bytes the server holds for its clients at once, all connections together: request "
            "heads and bodies being read, and answers not yet taken by their clients. A request that "
            "would go past it is answered 503 with Retry-After (a head still arriving: its connection "
            "is closed); the last quarter is kept for requests of at most 256 KiB, so that large ones "
            "cannot crowd out ordinary reviews."
        ),
    )
    max_connections: int = Field(
        MAX_CONNECTIONS,
        ge=16,
        description=(
            "Most connections open at once, in every stage (waiting for TLS, in the handshake, "
            "serving or idle); one accepted past it is reset at once, before TLS, and counted in "
            "webhook_connections_dropped_total{reason=\"max_connections\"}. The default, with "
            "--max-held-bytes, fits the chart's 256Mi memory limit."
        ),
        json_schema_extra={"metavar": "N"},
    )
    write_timeout: Seconds = Field(
        10.0,
        description=(
            "Seconds an answer may wait for its client to take it once it has backed up in the "
            "server's buffers (the client reads too slowly, or not at all); then the connection is "
            "dropped and its buffers freed. Also bounds the TLS close of a connection its answer closed."
        ),
    )
    access_log: bool = Field(False, description="Log every HTTP request.")
    cert_reload_interval: Seconds = Field(
        2.0,
        description="Seconds between checks of the certificate and key files for changes.",
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
    drain_timeout: Seconds = Field(
        10.0,
        description=(
            "Seconds the drain may take once the listener has closed: requests under way are "
            "answered; whatever is left then is cut off, so that no client can hold the exit."
        ),
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
        """A body may hold three quarters of the budget (``webhook.server.limits.Budget``): a larger
        limit would answer bodies it accepts 503 for ever rather than 413."""
        if self.max_body_bytes > self.max_held_bytes - self.max_held_bytes // 4:
            raise ValueError(
                f"--max-held-bytes ({self.max_held_bytes}) must be at least 4/3 of --max-body-bytes "
                f"({self.max_body_bytes}): one large body may hold three quarters of it"
            )
        return self

    @property
    def uses_cluster(self) -> bool:
        """Whether the store is the cluster's (list+watch) rather than the embedded one (files):
        with a kubeconfig, or in a pod when no manifests are given."""
        return self.kubeconfig is not None or (not self.objects and bool(os.environ.get("KUBERNETES_SERVICE_HOST")))


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


class CertsSettings(CommandSettings):
    out: Path = Field(
        Path("certs"),
        description="Directory written: ca.crt, ca.key, tls.crt, tls.key.",
        json_schema_extra={"metavar": "DIR"},
    )
    cert_hosts: Hosts = Field(
        default_factory=lambda: ["localhost", "127.0.0.1"],
        description=(
            "Comma-separated DNS names and IP addresses the serving certificate is valid for (--hosts, "
            "its former name, is still taken)."
        ),
        json_schema_extra={"metavar": "HOSTS", "comma_list": True, "former": ["--hosts"]},
    )
    days: int = Field(365, ge=1, description="Days the certificates are valid.")
    key_type: Literal["ecdsa", "rsa"] = Field(
        "ecdsa",
        description="ECDSA P-256 (a new TLS connection costs about half of an RSA-2048 handshake) or RSA-2048.",
    )
    force: bool = Field(False, description="Replace the files even when they are valid.")

    @field_validator("cert_hosts")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one host is needed")
        return value
