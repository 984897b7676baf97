"""The options of the serving certificate: ``serve --cert-*`` (the certificate controller) and the
``certs`` command, which name DNS names and IP addresses the same way (``--cert-hosts``)."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator
from pydantic_settings import NoDecode

from webhook.durations import parse_duration
from webhook.options import CommandSettings, split_list

DNS_NAME = re.compile(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*")


def _valid_hosts(hosts: list[str]) -> list[str]:
    for host in hosts:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            if not DNS_NAME.fullmatch(host):
                raise ValueError(f"{host!r} is neither an IP address nor a DNS name") from None
    return hosts


Hosts = Annotated[list[str], NoDecode, BeforeValidator(lambda value: split_list(value, ",")), AfterValidator(_valid_hosts)]
"""DNS names and IP addresses, comma-separated on the command line and in the environment."""

SHORTEST_VALIDITY = 20.0
"""Seconds: a third of it covers two checks and the two seconds a replica waits for a new CA to be
trusted before it serves a certificate signed by it."""


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
    cert_validity: float = Field(
        90 * 86400.0,
        gt=0,
        description=(
            "Lifetime of each CA and certificate of --cert-secret (2160h, 90d, 1h30m, 45s); both are "
            "renewed two thirds through it."
        ),
        json_schema_extra={"metavar": "DURATION", "default_text": "2160h"},
    )
    cert_check_interval: float = Field(
        10.0,
        gt=0,
        description=(
            "Seconds between checks of --cert-secret and of the webhook configurations (sooner while a "
            "check fails or a new certificate waits for its CA to be trusted)."
        ),
        json_schema_extra={"metavar": "SECONDS"},
    )

    @field_validator("cert_validity", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip().replace(".", "", 1).isdigit():
            return parse_duration(value)
        return value

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
        description=(
            "ECDSA P-256 (a new TLS connection costs about half of an RSA-2048 handshake) or RSA-2048."
        ),
    )
    force: bool = Field(False, description="Replace the files even when they are valid.")

    @field_validator("cert_hosts")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one host is needed")
        return value
