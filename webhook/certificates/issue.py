"""Making certificates: a CA, and a serving certificate it signs for some hosts.

Used by ``webhook certs`` (development certificates) and by the certificate controller of
``webhook serve``. ECDSA P-256 by default: a new TLS connection costs about half of an RSA-2048
handshake (docs/PERFORMANCE.md).
"""

from __future__ import annotations

import datetime
import ipaddress
from typing import Literal

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

KeyType = Literal["ecdsa", "rsa"]
PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
Pair = tuple[x509.Certificate, PrivateKey]


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


def subject_names(hosts: list[str]) -> list[x509.GeneralName]:
    """Each host as an IP address or a DNS name, as a client checking it will read it."""
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


def new_serving(
    ca: Pair, hosts: list[str], not_before: datetime.datetime, not_after: datetime.datetime, key_type: KeyType = "ecdsa"
) -> Pair:
    """A serving certificate for ``hosts`` signed by ``ca``, never outliving it."""
    ca_cert, ca_key = ca
    key = new_key(key_type)
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
        .add_extension(x509.SubjectAlternativeName(subject_names(hosts)), critical=False)
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
    return [host for host in hosts if _san_value(host) not in covered]


def _san_value(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host.lower()


def is_ca(cert: x509.Certificate) -> bool:
    try:
        return bool(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except x509.ExtensionNotFound:
        return False


def cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def key_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
