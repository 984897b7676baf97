"""What the API server trusts: the Secret's CAs written into both webhook configurations'
``caBundle``, and since when this replica has seen each there. A CA stays there until it expires,
even when the Secret no longer lists it: a replica may still serve a certificate it signed."""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Callable, Iterable

from cryptography import x509
from kubernetes.client.exceptions import ApiException

from webhook.certificates.pki import bundle_pem, fingerprint, read_cas, unexpired
from webhook.kube.api import CONFLICT, status_message
from webhook.registration.configurations import Configuration, WebhookConfigurations

log = logging.getLogger(__name__)

TRUST_DELAY = 2.0
"""Seconds a CA must have been in both webhook configurations before a certificate it signed is
served: the API servers see a configuration change through their watch within a second or so."""


class PublishError(Exception):
    """A configuration cannot be read or written; one line for the log."""


def published(secret_bundle: Iterable[x509.Certificate], configured: Iterable[bytes], now: datetime.datetime) -> bytes:
    """The Secret's CAs, then every other CA already there, none of them expired."""
    cas = list(secret_bundle)
    for pem in configured:
        cas.extend(read_cas(pem))
    return bundle_pem(unexpired(cas, now))


def trusted_by(bundles: Iterable[bytes]) -> set[str]:
    """Fingerprints of the CAs in every one of ``bundles`` (each webhook's caBundle)."""
    sets = [{fingerprint(ca) for ca in read_cas(bundle)} for bundle in bundles]
    return set.intersection(*sets) if sets else set()


class Trust:
    def __init__(self, configurations: WebhookConfigurations, clock: Callable[[], float] = time.monotonic) -> None:
        self.configurations = configurations
        self.clock = clock
        self.since: dict[str, float] = {}
        """When this replica first saw each CA in both configurations, as long as it stays there."""
        self.published = 0
        """Configuration writes this replica made."""

    def publish(self, secret_bundle: tuple[x509.Certificate, ...], now: datetime.datetime) -> None:
        """Writes the bundle where it is not there yet, then notes which CAs both hold."""
        present = self._both()
        bundle = published(secret_bundle, (b for c in present for b in c.bundles()), now)
        held: list[bytes] = []
        for configuration in present:
            if all(b == bundle for b in configuration.bundles()):
                held.extend(configuration.bundles())
            else:
                held.append(bundle if self._write(configuration, bundle) else b"")
        self._note(trusted_by(held))

    def _both(self) -> list[Configuration]:
        """PublishError naming those that do not exist (nothing is trusted then)."""
        found = self.configurations.read()
        missing = [kind for kind, c in found.items() if c is None]
        if missing:
            self._note(set())
            raise PublishError(f"{' and '.join(missing)} {self.configurations.name} does not exist: nothing trusts the serving certificate")
        return [c for c in found.values() if c is not None]

    def _write(self, configuration: Configuration, bundle: bytes) -> bool:
        """False when the configuration changed since it was read (written again at the next check)."""
        try:
            self.configurations.replace(configuration, configuration.with_bundle(bundle))
        except ApiException as err:
            if err.status == 0:
                raise
            if err.status != CONFLICT:
                raise PublishError(f"cannot write the caBundle of {configuration.kind} {configuration.name}: {status_message(err)}") from None
            log.debug("%s %s changed while its caBundle was written; written at the next check", configuration.kind, configuration.name)
            return False
        self.published += 1
        log.info("wrote %d CAs into the caBundle of %s %s", len(read_cas(bundle)), configuration.kind, configuration.name)
        return True

    def _note(self, trusted: set[str]) -> None:
        now = self.clock()
        self.since = {fp: self.since.get(fp, now) for fp in trusted}

    def trusted_for(self, ca: x509.Certificate) -> float:
        """Seconds since ``ca`` was first seen in both configurations (negative when it is not there)."""
        since = self.since.get(fingerprint(ca))
        return -1.0 if since is None else self.clock() - since

    def trusted(self, ca: x509.Certificate) -> bool:
        return self.trusted_for(ca) >= TRUST_DELAY
