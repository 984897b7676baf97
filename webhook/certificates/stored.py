"""What a certificate Secret holds, read as the controller needs it: the CAs of its bundle and,
when it can serve, its serving pair; or, in one line, why it cannot.

The Secret's keys are those of cert-manager's and the other modes' Secrets: ``ca.crt`` (every CA
clients should trust, newest first), ``tls.crt`` and ``tls.key``. Anything may have been written
there by hand, so nothing is trusted: unreadable CAs are left out of the bundle, and a pair that
does not parse, does not match, has expired, does not cover the hosts or was not signed by a CA of
the bundle is no pair.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from webhook.certificates.issue import cert_pem, is_ca, uncovered

CA_BUNDLE, TLS_CERT, TLS_KEY = "ca.crt", "tls.crt", "tls.key"


def fingerprint(cert: x509.Certificate) -> str:
    return hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()[:16]


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


def decode(data: Mapping[str, str] | None) -> dict[str, bytes]:
    """A Secret's ``data`` (base64 values) as bytes; a value that is not base64 reads as empty."""
    decoded = {}
    for key, value in (data or {}).items():
        try:
            decoded[key] = base64.b64decode(value or "", validate=True)
        except (binascii.Error, ValueError):
            decoded[key] = b""
    return decoded


def encode(values: Mapping[str, bytes]) -> dict[str, str]:
    return {key: base64.b64encode(value).decode() for key, value in values.items()}


def read_cas(pem: bytes) -> list[x509.Certificate]:
    """The CA certificates in a PEM bundle; anything else in it is skipped."""
    found = []
    for block in pem.split(b"-----END CERTIFICATE-----"):
        if b"-----BEGIN CERTIFICATE-----" not in block:
            continue
        try:
            cert = x509.load_pem_x509_certificate(block + b"-----END CERTIFICATE-----\n")
        except ValueError:
            continue
        if is_ca(cert):
            found.append(cert)
    return found


def bundle_pem(cas: Iterable[x509.Certificate]) -> bytes:
    """The CAs as one PEM bundle, each once, in the order given."""
    seen: set[str] = set()
    out = []
    for cert in cas:
        if fingerprint(cert) not in seen:
            seen.add(fingerprint(cert))
            out.append(cert_pem(cert))
    return b"".join(out)


def unexpired(cas: Iterable[x509.Certificate], now: datetime.datetime) -> list[x509.Certificate]:
    return [cert for cert in cas if cert.not_valid_after_utc > now]


def read(data: Mapping[str, str] | None, hosts: list[str], now: datetime.datetime) -> Stored:
    values = decode(data)
    bundle = tuple(read_cas(values.get(CA_BUNDLE, b"")))
    if not values.get(TLS_CERT) and not values.get(TLS_KEY):
        return Stored(bundle, None, "it holds no certificate yet")
    try:
        return Stored(bundle, _pair(values, bundle, hosts, now), None)
    except _Unusable as why:
        return Stored(bundle, None, str(why))


class _Unusable(Exception):
    pass


def _pair(values: Mapping[str, bytes], bundle: tuple[x509.Certificate, ...], hosts: list[str], now: datetime.datetime) -> ServingPair:
    try:
        cert = x509.load_pem_x509_certificate(values.get(TLS_CERT, b""))
    except ValueError:
        raise _Unusable(f"{TLS_CERT} is not a PEM certificate") from None
    try:
        key = serialization.load_pem_private_key(values.get(TLS_KEY, b""), password=None)
    except (ValueError, TypeError):
        raise _Unusable(f"{TLS_KEY} is not an unencrypted PEM private key") from None
    if not isinstance(key, (ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey)) or key.public_key() != cert.public_key():
        raise _Unusable(f"{TLS_KEY} is not the key of {TLS_CERT}")
    if cert.not_valid_after_utc <= now:
        raise _Unusable(f"{TLS_CERT} expired at {cert.not_valid_after_utc:%Y-%m-%d %H:%M:%S} UTC")
    missing = uncovered(cert, hosts)
    if missing:
        raise _Unusable(f"{TLS_CERT} does not cover {', '.join(missing)}")
    return ServingPair(cert, values[TLS_CERT], values[TLS_KEY], _issuer(cert, bundle))


def _issuer(cert: x509.Certificate, bundle: tuple[x509.Certificate, ...]) -> x509.Certificate:
    for ca in bundle:
        try:
            cert.verify_directly_issued_by(ca)
        except (ValueError, TypeError, InvalidSignature):
            continue
        return ca
    raise _Unusable(f"{TLS_CERT} is not signed by a CA of {CA_BUNDLE}")
