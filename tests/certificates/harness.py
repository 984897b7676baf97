"""A certificate controller against the fake API server, as ``serve --cert-secret`` builds it, with
clocks the tests move: the Secret, both webhook configurations, the files it writes."""

from __future__ import annotations

import asyncio
import base64
import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakeapi import FakeApiServer

from certificates.pki import HOSTS, NOW
from webhook.certificates.controller import CertificateController, ServedFiles
from webhook.certificates.pki import read_cas
from webhook.certificates.secret import CertificateSecret
from webhook.certificates.trust import Trust
from webhook.kube.access import Component, GuardedApiClient, guarded
from webhook.registration.configurations import KINDS as CONFIGURATION_KINDS
from webhook.registration.configurations import WebhookConfigurations

NAMESPACE, SECRET, CONFIGURATION = "grove-system", "webhook-certificate", "webhook"
KINDS = {"validatingwebhookconfigurations": "ValidatingWebhookConfiguration",
         "mutatingwebhookconfigurations": "MutatingWebhookConfiguration"}


def install(api: FakeApiServer) -> None:
    """What the chart installs in controller mode: an empty Secret, configurations without caBundle."""
    api.create({"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": SECRET, "namespace": NAMESPACE}})
    for kind in KINDS.values():
        api.create({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": CONFIGURATION},
                    "webhooks": [{"name": "a.webhooks.grove.io", "clientConfig": {"url": "https://127.0.0.1:1/a"}},
                                 {"name": "b.webhooks.grove.io", "clientConfig": {"url": "https://127.0.0.1:1/b"}}]})


@dataclass
class Clocks:
    wall: datetime.datetime = NOW
    monotonic: float = 1000.0

    def advance(self, seconds: float) -> None:
        self.wall += datetime.timedelta(seconds=seconds)
        self.monotonic += seconds


@dataclass
class Replica:
    """One webhook replica's controller, its files in ``directory``."""

    kube: Any
    directory: Path
    clocks: Clocks
    validity: datetime.timedelta = datetime.timedelta(days=90)
    kinds: tuple[str, ...] = CONFIGURATION_KINDS
    """The configurations the release has (``serve --no-validating-webhook``: the mutating one alone)."""
    reloads: list[bytes] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.api: GuardedApiClient = guarded(self.kube, Component.CERTIFICATES, NAMESPACE, None, frozenset({SECRET, CONFIGURATION}))
        secret = CertificateSecret(self.api, NAMESPACE, SECRET, HOSTS, self.validity, clock=lambda: self.clocks.wall)
        trust = Trust(WebhookConfigurations(self.api, CONFIGURATION, self.kinds), clock=lambda: self.clocks.monotonic)
        self.files = ServedFiles(self.directory / "tls.crt", self.directory / "tls.key")
        self.controller = CertificateController(secret, trust, self.files, interval=10)

    def start(self) -> None:
        """As ``serve`` starts: a placeholder to listen with, then the first check."""
        self.controller.prepare()
        self.controller.reload = self._reload
        self.check()

    def check(self) -> None:
        """One check, and the pair it says to serve served."""
        pair = asyncio.run(self.controller.check())
        if pair is not None:
            self.controller._serve(pair)

    def _reload(self) -> bool:
        self.reloads.append(self.files.cert.read_bytes())
        return True

    def served(self) -> bytes:
        return self.files.cert.read_bytes()


def secret_data(api: FakeApiServer) -> dict[str, bytes]:
    secret = api.get("secrets", NAMESPACE, SECRET) or {}
    return {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}


def bundles(api: FakeApiServer) -> list[bytes]:
    """The caBundle of every webhook of both configurations (PEM; empty where there is none)."""
    found = []
    for plural in KINDS:
        configuration = api.get(plural, None, CONFIGURATION) or {"webhooks": []}
        found += [base64.b64decode(w["clientConfig"].get("caBundle", "")) for w in configuration["webhooks"]]
    return found


def cas(pem: bytes) -> list[str]:
    return [c.subject.rfc4514_string() + c.not_valid_before_utc.isoformat() for c in read_cas(pem)]
