"""The certificate controller of ``webhook serve --cert-secret`` (DECISIONS.md §6.1): every
``--cert-check-interval`` each replica renews the Secret when it needs it (``secret``), writes its
CAs into both webhook configurations (``trust``), and serves its certificate, without a restart,
once its CA has been trusted for ``TRUST_DELAY``; until then it serves the one it had.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from kubernetes.client.exceptions import ApiException
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from webhook.certificates.pki import bundle_pem, cert_pem, key_pem, new_ca, new_serving, write_atomically, write_pair
from webhook.certificates.secret import CertificateError, CertificateSecret, ServingPair
from webhook.certificates.trust import TRUST_DELAY, PublishError, Trust
from webhook.errors import CommandError
from webhook.kube.access import Component, KubeConfigError, api_client, guarded, own_namespace
from webhook.kube.api import CONNECTION_ERRORS, connection_problem
from webhook.kube.attempts import Attempts
from webhook.registration.configurations import KINDS, WebhookConfigurations
from webhook.settings import ServeSettings

log = logging.getLogger(__name__)

FAILURES: tuple[type[BaseException], ...] = (CertificateError, PublishError, ApiException, *CONNECTION_ERRORS)
SOONEST = 0.2
"""Seconds to the next check at least, whatever is waiting."""
REQUEST_TIMEOUT = (3.0, 5.0)
"""Connect and read seconds of each request: a check waits no longer on an API server that does not answer."""


class ServedFiles:
    """``--tls-cert``, ``--tls-key`` (an emptyDir in the chart: the root filesystem is read-only),
    and the CA bundle beside them as ``ca.crt`` for clients on the same machine, such as a probe."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.cert, self.key, self.ca = cert, key, cert.with_name("ca.crt")

    def write(self, cert: bytes, key: bytes, ca: bytes) -> None:
        self.cert.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.ca, ca, 0o644)
        write_pair(self.cert, self.key, cert, key)


class CertificateController:
    def __init__(self, secret: CertificateSecret, trust: Trust, files: ServedFiles, interval: float) -> None:
        self.secret, self.trust, self.files, self.interval = secret, trust, files, interval
        self.served: ServingPair | None = None
        self.latest: ServingPair | None = None
        """The Secret's pair at the last check."""
        self.bundle = b""
        self.failed_checks = 0
        self.reload: Callable[[], bool] | None = None
        """Loads the files just written into a new TLS context (the server's reloader), once serving."""
        self._reading = Attempts(f"reading {secret}", initial=SOONEST, cap=interval)
        self._publishing = Attempts(f"writing the CA of {secret} into the webhook configurations", initial=SOONEST, cap=interval)

    def prepare(self) -> None:
        """A self-signed pair nobody trusts, so that the listener starts, and answers probes,
        whatever the API server does."""
        now = datetime.datetime.now(datetime.timezone.utc)
        ca = new_ca("grove-sharing-webhook placeholder", now, now + datetime.timedelta(days=1))
        cert, key = new_serving(ca, self.secret.hosts, now, now + datetime.timedelta(days=1))
        self.files.write(cert_pem(cert), key_pem(key), b"")

    async def run(self) -> None:
        delay = 0.0
        while True:
            await asyncio.sleep(delay)
            pair = await self.check()
            if pair is not None:
                self._serve(pair)
            delay = self._next_check()

    async def check(self) -> ServingPair | None:
        """The new pair to serve now, if any. Run in a daemon thread, not the loop's executor, whose
        threads the exit waits for: a check hung on a silent API server must not hold the exit."""
        try:
            return await _in_daemon_thread(self._sync)
        except FAILURES as err:
            self.failed_checks += 1
            self._reading.failed(_problem(err))
            return None

    def _sync(self) -> ServingPair | None:
        stored = self.secret.ensure()
        self._reading.succeeded()
        self.latest, self.bundle = stored.pair, bundle_pem(stored.bundle)
        try:
            self.trust.publish(stored.bundle, self.secret.clock())
        except FAILURES as err:
            self.failed_checks += 1
            self._publishing.failed(_problem(err))
        else:
            self._publishing.succeeded()
        pair = stored.pair
        if pair is None or (self.served is not None and pair.cert == self.served.cert):
            return None
        return pair if self.served is None or self.trust.trusted(pair.issuer) else None

    def _serve(self, pair: ServingPair) -> None:
        self.files.write(pair.cert_pem, pair.key_pem, self.bundle)
        if self.reload is not None and not self.reload():
            return
        first, self.served = self.served is None, pair
        log.info("%s the certificate of %s (%s)", "serving" if first else "now serving", self.secret, pair)

    def _next_check(self) -> float:
        """Sooner when a certificate waits for its CA's trust or the last check failed."""
        if self._reading.failures or self._publishing.failures:
            return max(SOONEST, min(self._reading.delay, self._publishing.delay, self.interval))
        waiting = [p.issuer for p in (self.served, self.latest) if p is not None and not self.trust.trusted(p.issuer)]
        if waiting:
            return max(SOONEST, min(self.interval, TRUST_DELAY - max(self.trust.trusted_for(ca) for ca in waiting)))
        return self.interval

    def readiness(self) -> str | None:
        """None once the API server can call this replica: it serves the Secret's certificate, which
        both webhook configurations trust."""
        if self.served is None:
            return f"no serving certificate from {self.secret} yet"
        if not self.trust.trusted(self.served.issuer):
            return "the CA of the serving certificate is not yet in both webhook configurations"
        return None


def _in_daemon_thread(function: Callable[[], ServingPair | None]) -> asyncio.Future[ServingPair | None]:
    future: concurrent.futures.Future[ServingPair | None] = concurrent.futures.Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return  # cancelled before it started
        try:
            future.set_result(function())
        except BaseException as err:  # noqa: BLE001 - handed to the awaiting coroutine
            future.set_exception(err)

    threading.Thread(target=work, name="certificate-check", daemon=True).start()
    # Once the awaiting coroutine is cancelled, or the loop closed, the outcome is dropped.
    return asyncio.wrap_future(future)


def _problem(err: BaseException) -> str:
    return str(err) if isinstance(err, (CertificateError, PublishError)) else connection_problem(err)


class CertificateCollector(Collector):
    """Read when scraped. The certificate's expiry is the reloader's
    (``webhook_certificate_expiry_timestamp_seconds``), in every mode."""

    def __init__(self, controller: CertificateController) -> None:
        self._controller = controller

    def collect(self) -> Iterator[CounterMetricFamily]:
        c = self._controller
        yield CounterMetricFamily("webhook_certificate_renewals", "New CAs and certificates this replica wrote into the Secret.", value=c.secret.renewals)
        yield CounterMetricFamily("webhook_certificate_ca_bundle_writes", "caBundle writes this replica made to the webhook configurations.", value=c.trust.published)
        yield CounterMetricFamily("webhook_certificate_check_errors", "Checks of the Secret or the webhook configurations that failed (retried sooner).", value=c.failed_checks)


def controller_for(settings: ServeSettings) -> CertificateController:
    """Its client allowed only the Secret and the two configurations (``webhook.kube.access``); a
    CommandError when there is no cluster to talk to."""
    assert settings.cert_secret is not None and settings.webhook_configuration is not None
    try:
        api = api_client(str(settings.kubeconfig) if settings.kubeconfig else None, settings.context)
    except KubeConfigError as err:
        raise CommandError(str(err)) from None
    api.configuration.retries = False  # each check is retried by the controller, sooner when it failed
    namespace = settings.cert_secret_namespace or own_namespace(settings.kubeconfig, settings.context)
    guarded_api = guarded(api, Component.CERTIFICATES, namespace, REQUEST_TIMEOUT, frozenset({settings.cert_secret, settings.webhook_configuration}))
    validity = datetime.timedelta(seconds=settings.cert_validity)
    secret = CertificateSecret(guarded_api, namespace, settings.cert_secret, settings.cert_hosts, validity)
    trust = Trust(WebhookConfigurations(guarded_api, settings.webhook_configuration, KINDS if settings.validating_webhook else KINDS[1:]))
    return CertificateController(secret, trust, ServedFiles(settings.tls_cert, settings.tls_key), settings.cert_check_interval)
