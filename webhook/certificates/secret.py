"""The certificate Secret: what it holds, what it needs, and its reads and writes through the API.

The Secret's keys are those of cert-manager's and the other modes' Secrets: ``ca.crt`` (every CA
clients should trust, newest first), ``tls.crt`` and ``tls.key``. Anything may have been written
there by hand, so nothing is trusted: unreadable CAs are left out of the bundle, and a pair that
does not parse, does not match, has expired, does not cover the hosts or was not signed by a CA of
the bundle is no pair.

What it needs is a pure ``Plan``, decided from what it holds and the time: nothing, a renewal, or
the expired CAs taken out of its bundle. A renewal is a new CA and a serving certificate it signs,
both valid for ``--cert-validity``; the CA's key is not kept (the next renewal makes a new CA). The
new CA goes first in the bundle and every CA of the bundle that has not expired stays after it, so
the certificates of the previous CA, still served until every replica has moved on, stay trusted.

Every replica reads and plans on every check and one write wins: each is a PUT of the Secret as
read, with its ``resourceVersion``; the replicas that lose read again and find the renewal made. The
Secret is read through the API rather than from a mounted volume, which the kubelet updates late.
"""

from __future__ import annotations

import base64
import datetime
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.certificates.pki import (
    CLOCK_SKEW,
    Unusable,
    bundle_pem,
    cert_pem,
    key_pem,
    load_cert,
    load_key,
    new_ca,
    new_serving,
    read_cas,
    uncovered,
    unexpired,
)
from webhook.kube.api import CONFLICT, NOT_FOUND, SECRETS, Objects, status_message
from webhook.registration.configurations import decode_base64

log = logging.getLogger(__name__)

CA_BUNDLE, TLS_CERT, TLS_KEY = "ca.crt", "tls.crt", "tls.key"
ATTEMPTS = 3
"""Reads and writes of one check: a conflict means another replica wrote, so the next read usually
finds nothing left to do."""

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
    """What a Secret's ``data`` (base64 values; one that is not reads as empty) holds."""
    values = {key: decode_base64(value) for key, value in (data or {}).items()}
    bundle = tuple(read_cas(values.get(CA_BUNDLE, b"")))
    if not values.get(TLS_CERT) and not values.get(TLS_KEY):
        return Stored(bundle, None, "it holds no certificate yet")
    try:
        return Stored(bundle, _pair(values, bundle, hosts, now), None)
    except Unusable as why:
        return Stored(bundle, None, str(why))


def _pair(values: Mapping[str, bytes], bundle: tuple[x509.Certificate, ...], hosts: list[str], now: datetime.datetime) -> ServingPair:
    cert = load_cert(values.get(TLS_CERT, b""), TLS_CERT)
    key = load_key(values.get(TLS_KEY, b""), TLS_KEY)
    if key is None or key.public_key() != cert.public_key():
        raise Unusable(f"{TLS_KEY} is not the key of {TLS_CERT}")
    if cert.not_valid_after_utc <= now:
        raise Unusable(f"{TLS_CERT} expired at {cert.not_valid_after_utc:%Y-%m-%d %H:%M:%S} UTC")
    missing = uncovered(cert, hosts)
    if missing:
        raise Unusable(f"{TLS_CERT} does not cover {', '.join(missing)}")
    for ca in bundle:
        try:
            cert.verify_directly_issued_by(ca)
        except (ValueError, TypeError, InvalidSignature):
            continue
        return ServingPair(cert, values[TLS_CERT], values[TLS_KEY], ca)
    raise Unusable(f"{TLS_CERT} is not signed by a CA of {CA_BUNDLE}")


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
    expired = len(stored.bundle) - len(unexpired(stored.bundle, now))
    if expired:
        return Plan(Action.PRUNE, f"{expired} CA of its bundle expired")
    return Plan(Action.KEEP, "")


def renewed(stored: Stored, hosts: list[str], validity: datetime.timedelta, name: str, now: datetime.datetime) -> dict[str, bytes]:
    """The Secret's new values: a new CA, first in the bundle, and a serving certificate it signs,
    valid from a little before now (at most a tenth of the lifetime, so that a short lifetime is
    not mostly in the past)."""
    not_before = now - min(CLOCK_SKEW, validity / 10)
    ca = new_ca(f"{name} CA {now:%Y-%m-%dT%H:%M:%SZ}", not_before, now + validity)
    cert, key = new_serving(ca, hosts, not_before, now + validity)
    return {CA_BUNDLE: bundle_pem([ca[0], *unexpired(stored.bundle, now)]), TLS_CERT: cert_pem(cert), TLS_KEY: key_pem(key)}


def pruned(stored: Stored, now: datetime.datetime) -> dict[str, bytes]:
    """The bundle without its expired CAs (only asked for while the pair is good)."""
    assert stored.pair is not None
    return {CA_BUNDLE: bundle_pem(unexpired(stored.bundle, now)), TLS_CERT: stored.pair.cert_pem, TLS_KEY: stored.pair.key_pem}


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


class CertificateSecret:
    def __init__(
        self, api: client.ApiClient, namespace: str, name: str, hosts: list[str], validity: datetime.timedelta, clock: Clock = utcnow
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
