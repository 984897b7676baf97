"""The serving certificate: checked before the server starts, and reloaded when its files change.

A change is loaded into a new ``SSLContext`` that the listener's SNI callback hands new connections
over to: loading it into the live context would add a certificate beside one of another key type
(OpenSSL keeps one per type), so that a renewal from ECDSA to RSA would go unseen by most clients.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from pathlib import Path

from webhook.errors import CommandError
from webhook.server.metrics import ServerMetrics

log = logging.getLogger(__name__)

Fingerprint = tuple[tuple[int, int, int, int], ...]


def check_files(cert: Path, key: Path) -> None:
    """Fails with one line when the pair cannot serve."""
    for what, path in (("certificate", cert), ("key", key)):
        try:
            path.read_bytes()
        except OSError as err:
            hint = " (make development certificates with 'python -m webhook certs')" if isinstance(err, FileNotFoundError) else ""
            raise CommandError(f"cannot read TLS {what} {path}: {err.strerror or err}{hint}") from None
    try:
        _load(cert, key)
    except ssl.SSLError as err:
        raise CommandError(f"cannot use TLS certificate {cert} with key {key}: {_problem(cert, key, err)}") from None


def _load(cert: Path, key: Path) -> ssl.SSLContext:
    """A server context as uvicorn makes one from the options ``webhook serve`` gives it."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


def _reason(err: ssl.SSLError) -> str:
    return str(err.reason or err.strerror or err).replace("_", " ").lower()


SWAPPED = "are --tls-cert and --tls-key swapped?"


def _problem(cert: Path, key: Path, err: ssl.SSLError) -> str:
    """What is wrong with a pair OpenSSL refused, in words: OpenSSL says ``[SSL] PEM lib`` for an
    empty file and for swapped files alike."""
    try:
        return diagnose(cert.read_bytes(), key.read_bytes()) or _reason(err)
    except OSError as read_err:
        return str(read_err)


def diagnose(cert: bytes, key: bytes) -> str | None:
    """Why a PEM certificate and key cannot serve together, or None when nothing is found wrong."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    problem = _pem_problem(cert, key)
    if problem is not None:
        return problem
    try:
        certificate = x509.load_pem_x509_certificates(cert)[0]
    except ValueError as err:
        return f"the certificate cannot be read: {err}"
    try:
        private_key = serialization.load_pem_private_key(key, password=None)
    except (ValueError, TypeError) as err:
        return f"the private key cannot be read: {err}"
    der, spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if certificate.public_key().public_bytes(der, spki) != private_key.public_key().public_bytes(der, spki):
        return "the key is not the certificate's (its public key differs: a key of another pair?)"
    return None


def _pem_problem(cert: bytes, key: bytes) -> str | None:
    """What is wrong with the two files as PEM text, before either is parsed."""
    if not cert.strip():
        return "the certificate file is empty"
    if b"-----BEGIN CERTIFICATE-----" not in cert:
        if b"PRIVATE KEY-----" in cert:
            return f"the certificate file holds a private key, not a certificate ({SWAPPED})"
        return "the certificate file holds no PEM certificate (no '-----BEGIN CERTIFICATE-----' line)"
    if not key.strip():
        return "the key file is empty"
    if b"PRIVATE KEY-----" not in key:
        if b"-----BEGIN CERTIFICATE-----" in key:
            return f"the key file holds a certificate, not a private key ({SWAPPED})"
        return "the key file holds no PEM private key (no '-----BEGIN ... PRIVATE KEY-----' line)"
    if b"ENCRYPTED" in key:
        return "the private key is encrypted; the server needs it unencrypted"
    return None


class CertificateReloader:
    def __init__(self, listener: ssl.SSLContext, cert: Path, key: Path, metrics: ServerMetrics, interval: float) -> None:
        self.context = listener
        """The context new handshakes are switched to: the listener's own until the first reload."""
        listener.sni_callback = self._switch
        self.cert = cert
        self.key = key
        self.metrics = metrics
        self.interval = interval
        self._seen = self._fingerprint()
        self._expires()

    def _fingerprint(self) -> Fingerprint | None:
        """Read through the symlinks: the kubelet updates a Secret volume by swapping ``..data``."""
        try:
            stats = [os.stat(path) for path in (self.cert, self.key)]
        except OSError:
            return None
        return tuple((s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns) for s in stats)

    def _switch(self, connection: ssl.SSLObject, _server_name: str | None, listener: ssl.SSLContext) -> None:
        if self.context is not listener:
            connection.context = self.context

    def check(self) -> bool:
        """Reloads if the files changed; True when a new certificate is served. A pair that cannot
        serve (half-written, say) is counted as an error, and the last good one stays in use."""
        current = self._fingerprint()
        if current == self._seen:
            return False
        self._seen = current
        try:
            if current is None:
                raise FileNotFoundError(f"{self.cert} or {self.key} is missing")
            context = _load(self.cert, self.key)
        except (OSError, ssl.SSLError) as err:
            self.metrics.certificate_reload_errors.inc()
            reason = _problem(self.cert, self.key, err) if isinstance(err, ssl.SSLError) else str(err)
            log.warning("certificate files changed but cannot be loaded, still serving the previous certificate: %s", reason)
            return False
        self.context = context
        self._expires()
        self.metrics.certificate_reloads.inc()
        log.info("reloaded the serving certificate from %s", self.cert)
        return True

    def _expires(self) -> None:
        """Tells the metrics when the certificate served expires, for an alert before it does."""
        from cryptography import x509

        try:
            served = x509.load_pem_x509_certificates(self.cert.read_bytes())[0]
        except (OSError, ValueError):
            return
        self.metrics.certificate_expiry.set(served.not_valid_after_utc.timestamp())

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.check()
