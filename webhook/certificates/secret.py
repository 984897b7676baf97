"""The certificate Secret (DECISIONS.md §6.1): what it holds, what it needs, and its reads and
writes, through the API rather than a mounted volume, which the kubelet updates late.

Its keys are cert-manager's: ``ca.crt`` (every CA clients should trust, newest first), ``tls.crt``
and ``tls.key``. Anything may have been written there by hand, so nothing is trusted: unreadable
CAs are left out of the bundle, and a pair that does not parse, does not match, has expired, does
not cover the hosts or was not signed by a CA of the bundle is no pair. Unexpired CAs stay in the
bundle after a renewal's new one, so the previous CA's certificates, served until every replica has
moved on, stay trusted.
"""

from __future__ import annotations

import base64
import datetime
import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cryptography import x509
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.certificates import pki
from webhook.kube.api import CONFLICT, NOT_FOUND, SECRETS, Objects, status_message
from webhook.registration.configurations import decode_base64

log = logging.getLogger(__name__)

CA_BUNDLE, TLS_CERT, TLS_KEY = "ca.crt", "tls.crt", "tls.key"
ATTEMPTS = 3
"""Reads and writes of one check: after a conflict another replica wrote, so there is usually
nothing left to do."""

Clock = Callable[[], datetime.datetime]


class CertificateError(Exception):
    """The Secret cannot be read or written; the message is one line for the log."""


@dataclass(frozen=True, slots=True)
class ServingPair:
    cert: x509.Certificate
    cert_pem: bytes
    key_pem: bytes
    issuer: x509.Certificate
    """The CA of the bundle that signed ``cert``: the one clients must trust for it."""

    @property
    def renewal_due(self) -> datetime.datetime:
        """Two thirds into the certificate's lifetime, as cert-manager renews by default."""
        start, end = self.cert.not_valid_before_utc, self.cert.not_valid_after_utc
        return start + (end - start) * 2 / 3

    def __str__(self) -> str:
        return f"serial {self.cert.serial_number:x}, valid until {self.cert.not_valid_after_utc:%Y-%m-%d %H:%M:%S} UTC"


@dataclass(frozen=True, slots=True)
class Stored:
    bundle: tuple[x509.Certificate, ...]
    pair: ServingPair | None
    problem: str | None
    """Why there is no pair; None when there is one."""


def read(data: Mapping[str, str] | None, hosts: list[str], now: datetime.datetime) -> Stored:
    """What a Secret's ``data`` holds (a value that is not base64 reads as empty)."""
    values = {key: decode_base64(value) for key, value in (data or {}).items()}
    bundle = tuple(pki.read_cas(values.get(CA_BUNDLE, b"")))
    if not values.get(TLS_CERT) and not values.get(TLS_KEY):
        return Stored(bundle, None, "it holds no certificate yet")
    try:
        return Stored(bundle, _pair(values, bundle, hosts, now), None)
    except pki.Unusable as why:
        return Stored(bundle, None, str(why))


def _pair(values: Mapping[str, bytes], bundle: tuple[x509.Certificate, ...], hosts: list[str], now: datetime.datetime) -> ServingPair:
    cert = pki.load_cert(values.get(TLS_CERT, b""), TLS_CERT)
    key = pki.load_key(values.get(TLS_KEY, b""), TLS_KEY)
    if key is None or key.public_key() != cert.public_key():
        raise pki.Unusable(f"{TLS_KEY} is not the key of {TLS_CERT}")
    if cert.not_valid_after_utc <= now:
        raise pki.Unusable(f"{TLS_CERT} expired at {cert.not_valid_after_utc:%Y-%m-%d %H:%M:%S} UTC")
    missing = pki.uncovered(cert, hosts)
    if missing:
        raise pki.Unusable(f"{TLS_CERT} does not cover {', '.join(missing)}")
    issuer = next((ca for ca in bundle if pki.issued_by(cert, ca)), None)
    if issuer is not None:
        return ServingPair(cert, values[TLS_CERT], values[TLS_KEY], issuer)
    raise pki.Unusable(f"{TLS_CERT} is not signed by a CA of {CA_BUNDLE}")


class Action(StrEnum):
    KEEP = "keep"
    RENEW = "renew"
    PRUNE = "prune"


@dataclass(frozen=True, slots=True)
class Plan:
    action: Action
    why: str


def plan(stored: Stored, now: datetime.datetime) -> Plan:
    pair = stored.pair
    if pair is None:
        return Plan(Action.RENEW, stored.problem or "it holds no certificate")
    if now >= pair.renewal_due:
        return Plan(Action.RENEW, f"the certificate ({pair}) is past two thirds of its lifetime")
    expired = len(stored.bundle) - len(pki.unexpired(stored.bundle, now))
    if expired:
        return Plan(Action.PRUNE, f"{expired} CA of its bundle expired")
    return Plan(Action.KEEP, "")


def renewed(stored: Stored, hosts: list[str], validity: datetime.timedelta, name: str, now: datetime.datetime) -> dict[str, bytes]:
    """Valid from a little before now: at most a tenth of the lifetime, so that a short lifetime is
    not mostly in the past."""
    not_before = now - min(pki.CLOCK_SKEW, validity / 10)
    ca = pki.new_ca(f"{name} CA {now:%Y-%m-%dT%H:%M:%SZ}", not_before, now + validity)
    cert, key = pki.new_serving(ca, hosts, not_before, now + validity)
    bundle = pki.bundle_pem([ca[0], *pki.unexpired(stored.bundle, now)])
    return {CA_BUNDLE: bundle, TLS_CERT: pki.cert_pem(cert), TLS_KEY: pki.key_pem(key)}


def pruned(stored: Stored, now: datetime.datetime) -> dict[str, bytes]:
    """The bundle without its expired CAs, while the pair is good."""
    assert stored.pair is not None
    bundle = pki.bundle_pem(pki.unexpired(stored.bundle, now))
    return {CA_BUNDLE: bundle, TLS_CERT: stored.pair.cert_pem, TLS_KEY: stored.pair.key_pem}


class CertificateSecret:
    def __init__(
        self, api: client.ApiClient, namespace: str, name: str, hosts: list[str], validity: datetime.timedelta,
        clock: Clock = functools.partial(datetime.datetime.now, datetime.timezone.utc),
    ) -> None:
        self.namespace, self.name = namespace, name
        self.hosts, self.validity = hosts, validity
        self.clock = clock
        self.renewals = 0
        """Renewals this replica wrote."""
        self._secrets = Objects(api, SECRETS, namespace)

    def __str__(self) -> str:
        return f"Secret {self.namespace}/{self.name}"

    def ensure(self) -> Stored:
        """What the Secret holds once it holds a pair that may be served."""
        for _ in range(ATTEMPTS):
            secret = self._get()
            now = self.clock()
            stored = read(secret.get("data"), self.hosts, now)
            decided = plan(stored, now)
            if decided.action is Action.KEEP:
                return stored
            values = renewed(stored, self.hosts, self.validity, self.name, now) if decided.action is Action.RENEW else pruned(stored, now)
            data = {**(secret.get("data") or {}), **{key: base64.b64encode(value).decode() for key, value in values.items()}}
            if not self._put({**secret, "data": data}):
                log.debug("%s was written by another replica meanwhile; reading it again", self)
                continue
            written = read(data, self.hosts, now)
            if decided.action is Action.RENEW:
                self.renewals += 1
                log.info("renewed the serving certificate in %s (%s): %s", self, decided.why, written.pair)
            else:
                log.info("removed expired CAs from the bundle of %s (%s)", self, decided.why)
            return written
        raise CertificateError(f"{self} kept changing while it was being written ({ATTEMPTS} conflicts in a row)")

    def _get(self) -> dict[str, Any]:
        try:
            return self._secrets.get(self.name)
        except ApiException as err:
            if err.status == NOT_FOUND:
                raise CertificateError(
                    f"{self} does not exist: the chart creates it, empty; without the chart create it with "
                    f"'kubectl -n {self.namespace} create secret generic {self.name}'"
                ) from None
            if err.status == 0:
                raise
            raise CertificateError(f"cannot read {self}: {status_message(err)}") from None

    def _put(self, secret: dict[str, Any]) -> bool:
        """False when another write came first (a conflict on the resourceVersion read)."""
        try:
            self._secrets.replace(secret)
        except ApiException as err:
            if err.status == CONFLICT:
                return False
            if err.status == 0:
                raise
            raise CertificateError(f"cannot write {self}: {status_message(err)}") from None
        return True
