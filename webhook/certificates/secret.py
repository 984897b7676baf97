"""The certificate Secret through the API server: read, planned (``webhook.certificates.plan``),
and written back when it needs a renewal or pruning.

Every replica does this on every check and one write wins: each is a PUT of the Secret as read,
with its ``resourceVersion``, so of replicas renewing at the same moment the first one's write is
taken and the others' fail with a conflict; they read again and find the renewal made. The Secret
is read through the API rather than from a mounted volume, which the kubelet updates only every
minute or so.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.certificates.plan import Action, plan, pruned, renewed
from webhook.certificates.stored import Stored, encode, read
from webhook.kube.apierrors import CONFLICT, NOT_FOUND, status_message
from webhook.kube.objects import Objects
from webhook.kube.resources import SECRETS

log = logging.getLogger(__name__)

ATTEMPTS = 3
"""Reads and writes of one check: a conflict means another replica wrote, so the next read usually
finds nothing left to do."""

Clock = Callable[[], datetime.datetime]


class CertificateError(Exception):
    """The Secret cannot be read or written; the message is one line for the log."""


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


class CertificateSecret:
    def __init__(
        self,
        api: client.ApiClient,
        namespace: str,
        name: str,
        hosts: list[str],
        validity: datetime.timedelta,
        clock: Clock = utcnow,
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
            data = {**(secret.get("data") or {}), **encode(values)}
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
            secret = self._secrets.get(self.name)
        except ApiException as err:
            if err.status == NOT_FOUND:
                raise CertificateError(
                    f"{self} does not exist: the chart creates it, empty; without the chart create it with "
                    f"'kubectl -n {self.namespace} create secret generic {self.name}'"
                ) from None
            if err.status == 0:
                raise
            raise CertificateError(f"cannot read {self}: {status_message(err)}") from None
        return secret

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
