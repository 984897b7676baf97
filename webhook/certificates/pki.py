"""Certificates and keys: a CA and a serving certificate it signs, made, read back, checked, and
written as files (Python's ``ssl`` loads them only from paths), for ``webhook certs`` and the
certificate controller. ECDSA P-256 by default: a new TLS connection costs much less than with
RSA-2048 (docs/PERFORMANCE.md). Each file is replaced atomically (a reader sees the old or the new
one, never half of one), the key first; keys are never readable by others.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

KeyType = Literal["ecdsa", "rsa"]
PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
Pair = tuple[x509.Certificate, PrivateKey]

CLOCK_SKEW = datetime.timedelta(minutes=5)
"""How far before its making a certificate is valid, for clients whose clocks are behind."""


class Unusable(Exception):
    """Why a certificate or key read cannot be used; one line naming it."""


def new_key(key_type: KeyType = "ecdsa") -> PrivateKey:
    if key_type == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ec.generate_private_key(ec.SECP256R1())


def _usage(*, signs_certificates: bool, enciphers_keys: bool = False) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=enciphers_keys,
        data_encipherment=False, key_agreement=False, key_cert_sign=signs_certificates,
        crl_sign=signs_certificates, encipher_only=False, decipher_only=False,
    )


def new_ca(common_name: str, not_before: datetime.datetime, not_after: datetime.datetime, key_type: KeyType = "ecdsa") -> Pair:
    """A CA that may sign serving certificates but no other CA (path length 0)."""
    key = new_key(key_type)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(signs_certificates=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def new_serving(
    ca: Pair, hosts: list[str], not_before: datetime.datetime, not_after: datetime.datetime, key_type: KeyType = "ecdsa"
) -> Pair:
    """For ``hosts``, each an IP address or a DNS name as a client checking it reads it; never
    outliving ``ca``."""
    ca_cert, ca_key = ca
    key = new_key(key_type)
    names = [x509.DNSName(host) if (ip := _address(host)) is None else x509.IPAddress(ip) for host in hosts]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(min(not_after, ca_cert.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(signs_certificates=False, enciphers_keys=key_type == "rsa"), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def uncovered(cert: x509.Certificate, hosts: list[str]) -> list[str]:
    """The hosts ``cert`` is not valid for (all of them when it names none)."""
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return list(hosts)
    covered = {str(n).lower() for n in names.get_values_for_type(x509.DNSName)}
    covered |= {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
    return [host for host in hosts if str(_address(host) or host.lower()) not in covered]


def is_ca(cert: x509.Certificate) -> bool:
    try:
        return bool(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except x509.ExtensionNotFound:
        return False


def issued_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def load_cert(pem: bytes, name: str) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(pem)
    except ValueError:
        raise Unusable(f"{name} is not a PEM certificate") from None


def load_key(pem: bytes, name: str) -> PrivateKey | None:
    """The key, None when it is neither ECDSA nor RSA."""
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError):
        raise Unusable(f"{name} is not an unencrypted PEM private key") from None
    return key if isinstance(key, (ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey)) else None


def cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def key_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def fingerprint(cert: x509.Certificate) -> str:
    return cert.fingerprint(hashes.SHA256()).hex()[:16]


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
    return b"".join(dict.fromkeys(map(cert_pem, cas)))


def unexpired(cas: Iterable[x509.Certificate], now: datetime.datetime) -> list[x509.Certificate]:
    return [cert for cert in cas if cert.not_valid_after_utc > now]


def write_pair(cert_path: Path, key_path: Path, cert: bytes, key: bytes) -> None:
    write_atomically(key_path, key, 0o600)
    write_atomically(cert_path, cert, 0o644)


def write_atomically(path: Path, content: bytes, mode: int) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)
        os.write(fd, content)
    finally:
        os.close(fd)
    os.replace(temporary, path)
