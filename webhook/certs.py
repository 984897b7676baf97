"""``webhook certs``: a development CA and a serving certificate it signs, for ``make run`` and tests.
Files that still serve are kept, and a good CA even when the serving certificate is replaced (for
new hosts, say), so that clients that trust ``ca.crt`` keep working across runs.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from cryptography import x509

from webhook.certificates.pki import (
    CLOCK_SKEW, KeyType, Pair, Unusable, cert_pem, is_ca, issued_by, key_pem, load_cert, load_key, new_ca, new_serving,
    uncovered, write_pair,
)
from webhook.errors import CommandError
from webhook.settings import CertsSettings

CA, TLS = ("ca.crt", "ca.key"), ("tls.crt", "tls.key")


def certs(settings: CertsSettings) -> int:
    print(ensure(settings.out, settings.cert_hosts, days=settings.days, key_type=settings.key_type, force=settings.force))
    return 0


def ensure(directory: Path, hosts: list[str], *, days: int = 365, key_type: KeyType = "ecdsa", force: bool = False) -> str:
    """Makes whatever is missing or unusable in ``directory`` and says, in one line, what it did."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca: Pair | None = None
    reason = "--force"
    if not force:
        try:
            ca = _load_ca(directory, now)
            _check_serving(directory, ca[0], hosts, now)
        except Unusable as why:
            reason = str(why)
        else:
            return f"kept the valid certificates in {directory} (serving certificate for {', '.join(hosts)})"
    validity = (now - CLOCK_SKEW, now + datetime.timedelta(days=days))
    try:
        directory.mkdir(parents=True, exist_ok=True)
        what = "a new serving certificate"
        if ca is None:
            ca = new_ca("grove-sharing-webhook development CA", *validity, key_type)
            _write(directory, CA, ca)
            what = "a new CA and serving certificate"
        _write(directory, TLS, new_serving(ca, hosts, *validity, key_type))
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


def _load(directory: Path, names: tuple[str, str], now: datetime.datetime) -> Pair:
    cert_name, key_name = names
    cert = load_cert(_read(directory / cert_name), cert_name)
    key = load_key(_read(directory / key_name), key_name)
    if key is None:
        raise Unusable(f"{key_name} is neither an ECDSA nor an RSA key")
    if key.public_key() != cert.public_key():
        raise Unusable(f"{key_name} does not match {cert_name}")
    if cert.not_valid_after_utc <= now:
        raise Unusable(f"{cert_name} expired on {cert.not_valid_after_utc:%Y-%m-%d}")
    return cert, key


def _load_ca(directory: Path, now: datetime.datetime) -> Pair:
    ca = _load(directory, CA, now)
    if not is_ca(ca[0]):
        raise Unusable(f"{CA[0]} is not a CA certificate")
    return ca


def _check_serving(directory: Path, ca: x509.Certificate, hosts: list[str], now: datetime.datetime) -> None:
    cert, _ = _load(directory, TLS, now)
    if not issued_by(cert, ca):
        raise Unusable(f"{TLS[0]} is not signed by {CA[0]}")
    try:
        cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        raise Unusable(f"{TLS[0]} has no subject alternative names") from None
    missing = uncovered(cert, hosts)
    if missing:
        raise Unusable(f"{TLS[0]} does not cover {', '.join(missing)}")


def _write(directory: Path, names: tuple[str, str], pair: Pair) -> None:
    write_pair(directory / names[0], directory / names[1], cert_pem(pair[0]), key_pem(pair[1]))
