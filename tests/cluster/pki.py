"""The test control plane's certificates: one CA that signs the API server's serving certificate,
the client certificates users and components authenticate with, and the serving certificate of the
webhook server the API server calls.

The API server maps a client certificate's Common Name to the user name and its Organizations to
groups, as it does in a cluster; ``system:masters`` is the administrators' group.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LIFETIME = datetime.timedelta(days=2)


@dataclass(frozen=True)
class Pair:
    """A certificate and its key, written as PEM files."""

    cert: Path
    key: Path

    def pem(self) -> bytes:
        return self.cert.read_bytes()


def _write(directory: Path, name: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> Pair:
    pair = Pair(directory / f"{name}.crt", directory / f"{name}.key")
    pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pair.key.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return pair


class Authority:
    """A CA that issues serving and client certificates into ``directory``."""

    def __init__(self, directory: Path, name: str = "grove-sharing-webhook test CA") -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + LIFETIME)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.pair = _write(directory, "ca", self.cert, self.key)

    def _issue(self, name: str, subject: x509.Name, usage: x509.ObjectIdentifier, hosts: tuple[str, ...] = ()) -> Pair:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + LIFETIME)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if hosts:
            names: list[x509.GeneralName] = []
            for host in hosts:
                try:
                    names.append(x509.IPAddress(ipaddress.ip_address(host)))
                except ValueError:
                    names.append(x509.DNSName(host))
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        return _write(self.directory, name, builder.sign(self.key, hashes.SHA256()), key)

    def serving(self, name: str, hosts: list[str]) -> Pair:
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])])
        return self._issue(name, subject, ExtendedKeyUsageOID.SERVER_AUTH, tuple(hosts))

    def client(self, user: str, groups: tuple[str, ...] = ()) -> Pair:
        attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
        subject = x509.Name([*attributes, x509.NameAttribute(NameOID.COMMON_NAME, user)])
        return self._issue(f"user-{user.replace(':', '-')}", subject, ExtendedKeyUsageOID.CLIENT_AUTH)


def signing_key(directory: Path) -> tuple[Path, Path]:
    """The key pair the API server signs ServiceAccount tokens with (private, public)."""
    key = ec.generate_private_key(ec.SECP256R1())
    private, public = directory / "sa.key", directory / "sa.pub"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public
