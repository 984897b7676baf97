"""Development certificates: a CA and a serving certificate it signs, for ``make run`` and tests.

Existing files are kept while they still serve (they parse, have not expired, cover the requested
hosts, the serving certificate is signed by the CA and each key matches its certificate), so clients
that trust ``ca.crt`` keep working across runs. A CA that is still good is kept even when the serving
certificate has to be replaced (e.g. for new hosts).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from webhook.errors import CommandError
from webhook.settings import CertsSettings

KeyType = Literal["ecdsa", "rsa"]
PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
CLOCK_SKEW = datetime.timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class CertificateFiles:
    directory: Path

    @property
    def ca_cert(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca.key"

    @property
    def tls_cert(self) -> Path:
        return self.directory / "tls.crt"

    @property
    def tls_key(self) -> Path:
        return self.directory / "tls.key"


class Unusable(Exception):
    """Why an existing file cannot be kept."""


def certs(settings: CertsSettings) -> int:
    print(ensure(settings.out, settings.hosts, days=settings.days, key_type=settings.key_type, force=settings.force))
    return 0


def ensure(
    directory: Path,
    hosts: list[str],
    *,
    days: int = 365,
    key_type: KeyType = "ecdsa",
    force: bool = False,
) -> str:
    """Makes whatever is missing or unusable in ``directory`` and says, in one line, what it did."""
    files = CertificateFiles(directory)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca: tuple[x509.Certificate, PrivateKey] | None = None
    reason = "--force"
    if not force:
        try:
            ca = _usable_ca(files, now)
            _check_serving(files, ca[0], hosts, now)
        except Unusable as why:
            reason = str(why)
        else:
            return f"kept the valid certificates in {directory} (serving certificate for {', '.join(hosts)})"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        what = "a new serving certificate"
        if ca is None:
            ca = _new_ca(key_type, days, now)
            _write_pair(files.ca_cert, files.ca_key, *ca)
            what = "a new CA and serving certificate"
        _write_pair(files.tls_cert, files.tls_key, *_new_serving(ca, hosts, key_type, days, now))
    except OSError as err:
        raise CommandError(f"cannot write certificates to {directory}: {err.strerror or err}") from None
    return f"wrote {what} for {', '.join(hosts)} to {directory} ({reason})"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise Unusable(f"{path.name} is missing") from None
    except OSError as err:
        raise Unusable(f"{path.name} is unreadable: {err.strerror}") from None


def _load_pair(cert_path: Path, key_path: Path, now: datetime.datetime) -> tuple[x509.Certificate, PrivateKey]:
    try:
        cert = x509.load_pem_x509_certificate(_read(cert_path))
    except ValueError:
        raise Unusable(f"{cert_path.name} is not a PEM certificate") from None
    try:
        key = serialization.load_pem_private_key(_read(key_path), password=None)
    except (ValueError, TypeError):
        raise Unusable(f"{key_path.name} is not an unencrypted PEM private key") from None
    if not isinstance(key, (ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey)):
        raise Unusable(f"{key_path.name} is neither an ECDSA nor an RSA key")
    cert_key = cert.public_key()
    if (
        not isinstance(cert_key, (ec.EllipticCurvePublicKey, rsa.RSAPublicKey))
        or key.public_key().public_numbers() != cert_key.public_numbers()
    ):
        raise Unusable(f"{key_path.name} does not match {cert_path.name}")
    if cert.not_valid_after_utc <= now:
        raise Unusable(f"{cert_path.name} expired on {cert.not_valid_after_utc:%Y-%m-%d}")
    return cert, key


def _usable_ca(files: CertificateFiles, now: datetime.datetime) -> tuple[x509.Certificate, PrivateKey]:
    cert, key = _load_pair(files.ca_cert, files.ca_key, now)
    try:
        is_ca = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        is_ca = False
    if not is_ca:
        raise Unusable(f"{files.ca_cert.name} is not a CA certificate")
    return cert, key


def _check_serving(files: CertificateFiles, ca: x509.Certificate, hosts: list[str], now: datetime.datetime) -> None:
    cert, _ = _load_pair(files.tls_cert, files.tls_key, now)
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        raise Unusable(f"{files.tls_cert.name} is not signed by {files.ca_cert.name}") from None
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        raise Unusable(f"{files.tls_cert.name} has no subject alternative names") from None
    covered = {str(n).lower() for n in names.get_values_for_type(x509.DNSName)}
    covered |= {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
    missing = [host for host in hosts if _san_value(host) not in covered]
    if missing:
        raise Unusable(f"{files.tls_cert.name} does not cover {', '.join(missing)}")


def _san_value(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host.lower()


def _new_key(key_type: KeyType) -> PrivateKey:
    if key_type == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ec.generate_private_key(ec.SECP256R1())


def _new_ca(key_type: KeyType, days: int, now: datetime.datetime) -> tuple[x509.Certificate, PrivateKey]:
    key = _new_key(key_type)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "grove-sharing-webhook development CA")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _new_serving(
    ca: tuple[x509.Certificate, PrivateKey], hosts: list[str], key_type: KeyType, days: int, now: datetime.datetime
) -> tuple[x509.Certificate, PrivateKey]:
    ca_cert, ca_key = ca
    key = _new_key(key_type)
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(min(now + datetime.timedelta(days=days), ca_cert.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=key_type == "rsa",
                data_encipherment=False, key_agreement=False, key_cert_sign=False, crl_sign=False,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def _write_pair(cert_path: Path, key_path: Path, cert: x509.Certificate, key: PrivateKey) -> None:
    """Key first, then certificate, each replaced atomically; keys are never readable by others."""
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    _write_atomically(key_path, key_pem, 0o600)
    _write_atomically(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def _write_atomically(path: Path, content: bytes, mode: int) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)
        os.write(fd, content)
    finally:
        os.close(fd)
    os.replace(temporary, path)
