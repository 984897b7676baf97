"""Development certificates: a CA and a serving certificate it signs, for ``make run`` and tests.

Existing files are kept while they still serve (they parse, have not expired, cover the requested
hosts, the serving certificate is signed by the CA and each key matches its certificate), so clients
that trust ``ca.crt`` keep working across runs. A CA that is still good is kept even when the serving
certificate has to be replaced (e.g. for new hosts).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from webhook.certificates.files import write_pair
from webhook.certificates.issue import KeyType, Pair, PrivateKey, cert_pem, is_ca, key_pem, new_ca, new_serving, uncovered
from webhook.errors import CommandError
from webhook.certificate_settings import CertsSettings

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
    print(ensure(settings.out, settings.cert_hosts, days=settings.days, key_type=settings.key_type, force=settings.force))
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
    ca: Pair | None = None
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


def _load_pair(cert_path: Path, key_path: Path, now: datetime.datetime) -> Pair:
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


def _usable_ca(files: CertificateFiles, now: datetime.datetime) -> Pair:
    cert, key = _load_pair(files.ca_cert, files.ca_key, now)
    if not is_ca(cert):
        raise Unusable(f"{files.ca_cert.name} is not a CA certificate")
    return cert, key


def _check_serving(files: CertificateFiles, ca: x509.Certificate, hosts: list[str], now: datetime.datetime) -> None:
    cert, _ = _load_pair(files.tls_cert, files.tls_key, now)
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        raise Unusable(f"{files.tls_cert.name} is not signed by {files.ca_cert.name}") from None
    try:
        cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        raise Unusable(f"{files.tls_cert.name} has no subject alternative names") from None
    missing = uncovered(cert, hosts)
    if missing:
        raise Unusable(f"{files.tls_cert.name} does not cover {', '.join(missing)}")


def _new_ca(key_type: KeyType, days: int, now: datetime.datetime) -> Pair:
    return new_ca("grove-sharing-webhook development CA", now - CLOCK_SKEW, now + datetime.timedelta(days=days), key_type)


def _new_serving(ca: Pair, hosts: list[str], key_type: KeyType, days: int, now: datetime.datetime) -> Pair:
    return new_serving(ca, hosts, now - CLOCK_SKEW, now + datetime.timedelta(days=days), key_type)


def _write_pair(cert_path: Path, key_path: Path, cert: x509.Certificate, key: PrivateKey) -> None:
    write_pair(cert_path, key_path, cert_pem(cert), key_pem(key))
