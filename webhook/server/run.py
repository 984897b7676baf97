"""``webhook serve``: the app on uvicorn over HTTPS, with certificate reload and graceful shutdown
(operations.md, Shutdown). With ``--metrics-port`` a second server in the same event loop serves
``/metrics`` under the same limits and TLS context, so that a reloaded certificate serves both.

A changed certificate is loaded into a new ``SSLContext`` that the listener's SNI callback hands new
connections over to: loaded into the live context, it would be added beside one of another key type
(OpenSSL keeps one per type), and a renewal from ECDSA to RSA would go unseen by most clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import uvicorn
import uvloop
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from starlette.types import ASGIApp

from webhook import logs
from webhook.certificates.controller import CertificateCollector, CertificateController, controller_for
from webhook.errors import CommandError
from webhook.server.app import create_app, create_metrics_app
from webhook.server.limits import Budget, ConnectionGuard, Connections, Lifecycle
from webhook.server.listener import AcceptErrors, Acceptor
from webhook.server.memory import Trimmer
from webhook.server.metrics import ServerMetrics
from webhook.settings import ServeSettings
from webhook.stores import ObjectStore, StoreError, build_store

log = logging.getLogger(__name__)
certificate_log = logging.getLogger("webhook.server.tls")
"""The certificate's checks and reloads, under the name they have always been logged with."""


class Server(uvicorn.Server):
    """uvicorn's server without its signal capture, which re-raises the signal after a clean
    shutdown (exit 143): ``_stop_on_signals`` handles them."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def uvicorn_config(settings: ServeSettings, app: ASGIApp, connections: Connections, port: int | None = None) -> uvicorn.Config:
    """The production configuration, each connection guarded by ``connections``."""
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=port or settings.port,
        ssl_certfile=settings.tls_cert,
        ssl_keyfile=settings.tls_key,
        http=connections.protocol(),
        # No WebSocket route: an upgrade request is served as plain HTTP, under the same limits.
        ws="none",
        lifespan="off",
        # uvicorn annotates these two int; they are handed to call_later and wait_for, which take floats.
        timeout_keep_alive=settings.keep_alive_timeout,  # type: ignore[arg-type]
        timeout_graceful_shutdown=settings.drain_timeout,  # type: ignore[arg-type]
        access_log=settings.access_log,
        log_config=None,
        server_header=False,
        proxy_headers=False,
    )
    config.load()
    return config


@dataclass(frozen=True, slots=True)
class Listener:
    """A uvicorn server and the acceptor that hands it its connections (``webhook.server.listener``):
    uvicorn is given no socket of its own to listen on."""

    server: Server
    acceptor: Acceptor
    connections: Connections


def listener(server: Server, sock: socket.socket, connections: Connections, context: ssl.SSLContext, limit: int,
             errors: AcceptErrors) -> Listener:
    config = server.config

    def protocol() -> ConnectionGuard:
        """The protocol uvicorn's own server would make of ``http=``, with the arguments it would give
        it (``lifespan="off"``: no state to share)."""
        return connections.guard(config=config, server_state=server.server_state, app_state={})

    return Listener(server, Acceptor(sock, connections, context, protocol, limit, errors, config.backlog), connections)


METRICS_HELD_BYTES = 8 * 1024 * 1024
"""What scrapes may make the server hold: small GETs, their answers tens of kilobytes."""
METRICS_CONNECTIONS = 32
"""Connections ``--metrics-port`` keeps open at once: each scraper holds one."""


def metrics_listener(settings: ServeSettings, metrics: ServerMetrics, lifecycle: Lifecycle, context: ssl.SSLContext,
                     sock: socket.socket, errors: AcceptErrors) -> Listener:
    """The ``--metrics-port`` server, with the webhooks' TLS context (which the reloader keeps)."""
    budget = Budget(METRICS_HELD_BYTES)
    connections = Connections(settings, budget, lifecycle.dropped)
    app = create_metrics_app(settings, metrics, lifecycle, budget, connections)
    config = uvicorn_config(settings, app, connections, settings.metrics_port)
    config.ssl = context
    return listener(Server(config), sock, connections, context, METRICS_CONNECTIONS, errors)


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so that a taken port is one clear line, not a log and exit."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise CommandError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    sock.set_inheritable(True)
    return sock


def serve(settings: ServeSettings) -> int:
    logs.configure(settings.log_level, settings.log_format)
    if settings.cert_secret is None:
        check_files(settings.tls_cert, settings.tls_key)
    with contextlib.ExitStack() as sockets:
        sock = sockets.enter_context(listen(settings.host, settings.port))
        metrics_sock = sockets.enter_context(listen(settings.host, settings.metrics_port)) if settings.metrics_port else None
        controller = controller_for(settings) if settings.cert_secret is not None else None
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(_serve(settings, build_store(settings), sock, metrics_sock, controller))
    return 0


async def _serve(
    settings: ServeSettings,
    store: ObjectStore,
    sock: socket.socket,
    metrics_sock: socket.socket | None,
    controller: CertificateController | None,
) -> None:
    try:
        await store.start()
    except StoreError as err:
        raise CommandError(str(err)) from None
    if controller is not None:
        controller.prepare()
    lifecycle = Lifecycle()
    budget = Budget(settings.max_held_bytes)
    connections = Connections(settings, budget, lifecycle.dropped)
    errors = AcceptErrors(lifecycle)
    metrics = ServerMetrics(store, lifecycle, budget, connections, errors)
    readiness = controller.readiness if controller is not None else None
    app = create_app(settings, store, metrics=metrics, lifecycle=lifecycle, budget=budget, readiness=readiness, connections=connections)
    server = Server(uvicorn_config(settings, app, connections))
    context = server.config.ssl
    assert context is not None
    listeners = [listener(server, sock, connections, context, settings.max_connections, errors)]
    reloader = CertificateReloader(context, settings.tls_cert, settings.tls_key, metrics, settings.cert_reload_interval)
    if metrics_sock is not None:
        listeners.append(metrics_listener(settings, metrics, lifecycle, context, metrics_sock, errors))
    if controller is not None:  # the controller writes the files, then has them reloaded
        controller.reload = reloader.check
        metrics.registry.register(CertificateCollector(controller))
    _stop_on_signals(settings, lifecycle, listeners)
    background = asyncio.create_task(reloader.run() if controller is None else controller.run())
    trimmer = asyncio.create_task(Trimmer(lambda: sum(each.connections.closed for each in listeners)).run())
    # What is built so far lives as long as the process: frozen, full collections stop walking it
    # and the latency tail shrinks.
    gc.collect()
    gc.freeze()
    log.info("serving https://%s:%d (%d PodCliqueSets in the store)", settings.host, settings.port, store.size)
    try:
        await _run(listeners, [background, trimmer])
    finally:
        await store.stop()


async def _run(listeners: list[Listener], background: list[asyncio.Task[None]]) -> None:
    """Accepts and serves until every uvicorn server has shut down; then cuts off what is left."""
    for each in listeners:
        each.acceptor.start()
    try:
        await asyncio.gather(*(each.server.serve(sockets=[]) for each in listeners))
    finally:
        for task in background:
            task.cancel()
        for each in listeners:
            # Still open at the drain's end (uvicorn cancelled their requests, if any): cut off.
            each.acceptor.close()
            each.acceptor.drop_all()
            each.connections.drop_all("drain_timeout")


def _stop_on_signals(settings: ServeSettings, lifecycle: Lifecycle, listeners: list[Listener]) -> None:
    """SIGTERM or SIGINT: draining at once, every server's graceful shutdown after
    ``--shutdown-delay``; a second SIGINT cuts it short."""
    loop = asyncio.get_running_loop()

    def stop_all() -> None:
        lifecycle.closed = True
        for each in listeners:
            lifecycle.dropped["drained_idle"] += each.connections.idle()
            each.acceptor.close()
            each.server.should_exit = True

    def begin_shutdown(signum: signal.Signals) -> None:
        if lifecycle.draining:
            for each in listeners:
                each.server.force_exit = signum == signal.SIGINT
            return
        log.info("received %s: readiness off, closing the listener in %g s", signum.name, settings.shutdown_delay)
        lifecycle.draining = True
        loop.call_later(settings.shutdown_delay, stop_all)

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, begin_shutdown, signum)


# --- the serving certificate ------------------------------------------------------------------

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


SWAPPED = "are --tls-cert and --tls-key swapped?"


def _problem(cert: Path, key: Path, err: ssl.SSLError) -> str:
    """What is wrong with a pair OpenSSL refused, in words: OpenSSL says ``[SSL] PEM lib`` for an
    empty file and for swapped files alike."""
    try:
        cert_bytes, key_bytes = cert.read_bytes(), key.read_bytes()
    except OSError as read_err:
        return str(read_err)
    problem = _pem_problem(cert_bytes, key_bytes)
    if problem is not None:
        return problem
    try:
        certificate = x509.load_pem_x509_certificates(cert_bytes)[0]
    except ValueError as why:
        return f"the certificate cannot be read: {why}"
    try:
        private_key = serialization.load_pem_private_key(key_bytes, password=None)
    except (ValueError, TypeError) as why:
        return f"the private key cannot be read: {why}"
    if certificate.public_key() != private_key.public_key():
        return "the key is not the certificate's (its public key differs: a key of another pair?)"
    return str(err.reason or err.strerror or err).replace("_", " ").lower()


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

    def _fingerprint(self) -> tuple[tuple[int, int, int, int], ...] | None:
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
            certificate_log.warning(
                "certificate files changed but cannot be loaded, still serving the previous certificate: %s", reason
            )
            return False
        self.context = context
        self._expires()
        self.metrics.certificate_reloads.inc()
        certificate_log.info("reloaded the serving certificate from %s", self.cert)
        return True

    def _expires(self) -> None:
        """Tells the metrics when the certificate served expires, for an alert before it does."""
        try:
            served = x509.load_pem_x509_certificates(self.cert.read_bytes())[0]
        except (OSError, ValueError):
            return
        self.metrics.certificate_expiry.set(served.not_valid_after_utc.timestamp())

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.check()
