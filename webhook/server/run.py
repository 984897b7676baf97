"""``webhook serve``: the app on uvicorn over HTTPS, with certificate reload and graceful shutdown.

Shutdown (SIGTERM or SIGINT): ``/readyz`` fails at once and every response closes its connection,
while the listener still accepts for ``--shutdown-delay`` seconds; then the listener closes and the
connections are drained within ``--drain-timeout`` (``webhook.server.drain``), and the process exits
0. uvicorn's own signal capture is replaced because it re-raises the signal after a clean shutdown
(exit 143); a second SIGINT cuts the drain short. With ``--metrics-port`` a second server, in the
same event loop and under the same limits, serves ``/metrics`` with the same TLS context (so a
reloaded certificate serves both); the signal handler stops both, and neither captures signals.

The certificate comes from ``--tls-cert`` and ``--tls-key``, reloaded when the files change, or,
with ``--cert-secret``, from the certificate controller (``webhook.certificates.controller``), which
writes those files and has them reloaded itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import socket
from collections.abc import Coroutine
from typing import Any

import uvicorn
import uvloop
from fastapi import FastAPI

from webhook import logs
from webhook.certificates.controller import CertificateCollector, CertificateController, controller_for
from webhook.errors import CommandError
from webhook.server.app import AdmissionApp, create_app, create_metrics_app
from webhook.server.budget import Budget
from webhook.server.connection.protocol import ServerProtocol
from webhook.server.connection.limits import Limits
from webhook.server.drain import Server
from webhook.server.lifecycle import Lifecycle
from webhook.server.metrics import ServerMetrics
from webhook.server.tls import CertificateReloader, check_files
from webhook.settings import ServeSettings
from webhook.stores.base import ObjectStore, StoreError

log = logging.getLogger(__name__)


def uvicorn_config(settings: ServeSettings, app: FastAPI, port: int | None = None) -> uvicorn.Config:
    """The production configuration; ``build_server`` makes the ``Server`` that runs it."""
    return uvicorn.Config(
        app,
        host=settings.host,
        port=port or settings.port,
        ssl_certfile=settings.tls_cert,
        ssl_keyfile=settings.tls_key,
        http=ServerProtocol,
        # No WebSocket route: an upgrade request is served as plain HTTP, under the limits of
        # ``ServerProtocol``, rather than handed to a protocol that has none of them.
        ws="none",
        loop="uvloop",
        lifespan="off",
        timeout_keep_alive=settings.keep_alive_timeout,  # type: ignore[arg-type]  # uvicorn annotates int; call_later takes a float
        access_log=settings.access_log,
        log_config=None,
        server_header=False,
        proxy_headers=False,
    )


def build_server(settings: ServeSettings, app: FastAPI, lifecycle: Lifecycle, budget: Budget | None = None) -> Server:
    """The server for ``app`` as ``webhook serve`` runs it (``lifecycle`` and ``budget`` are the
    app's): the connections answer the webhooks of an ``AdmissionApp`` themselves."""
    config = uvicorn_config(settings, app)
    config.load()
    budget = budget or Budget(settings.max_held_bytes)
    endpoints = app.webhook_endpoints if isinstance(app, AdmissionApp) else {}
    webhooks = {path.encode(): endpoint for path, endpoint in endpoints.items()}
    return Server(config, lifecycle, budget, Limits.of(settings), settings.drain_timeout, webhooks)


def build_metrics_server(settings: ServeSettings, metrics: ServerMetrics, listener: Server) -> Server:
    """The ``--metrics-port`` server: ``/metrics`` alone, under the limits of the other, with the
    other's TLS context, whose handshakes the certificate reloader switches to the current pair."""
    config = uvicorn_config(settings, create_metrics_app(metrics), settings.metrics_port)
    config.load()
    config.ssl = listener.config.ssl
    budget = Budget(METRICS_HELD_BYTES)
    return Server(config, Lifecycle(), budget, Limits.of(settings), settings.drain_timeout)


METRICS_HELD_BYTES = 8 * 1024 * 1024
"""What clients of ``/metrics`` may make the server hold: scrapes are small GETs, their answers tens
of kilobytes."""


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
    from webhook.stores import build_store

    with contextlib.ExitStack() as sockets:
        sock = sockets.enter_context(listen(settings.host, settings.port))
        metrics_sock = sockets.enter_context(listen(settings.host, settings.metrics_port)) if settings.metrics_port else None
        controller = controller_for(settings) if settings.cert_secret is not None else None
        try:
            store = build_store(settings)
        except StoreError as err:
            raise CommandError(str(err)) from None
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(_serve(settings, store, sock, metrics_sock, controller))
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
    metrics = ServerMetrics(store, lifecycle, budget)
    readiness = controller.readiness if controller is not None else None
    app = create_app(settings, store, metrics=metrics, lifecycle=lifecycle, budget=budget, readiness=readiness)
    server = build_server(settings, app, lifecycle, budget)
    assert server.config.ssl is not None
    reloader = CertificateReloader(server.config.ssl, settings.tls_cert, settings.tls_key, metrics, settings.cert_reload_interval)
    servers = [(server, sock)]
    if metrics_sock is not None:
        servers.append((build_metrics_server(settings, metrics, server), metrics_sock))
    _stop_on_signals(settings, servers)
    background = asyncio.create_task(_keep_certificate(reloader, controller, metrics))
    # Everything built so far (modules, the store, the app) lives as long as the process: moved out
    # of the collector's view, so full collections stop walking it and the latency tail shrinks.
    gc.collect()
    gc.freeze()
    log.info("serving https://%s:%d (%d PodCliqueSets in the store)", settings.host, settings.port, store.size)
    try:
        await asyncio.gather(*(s.serve(sockets=[listening]) for s, listening in servers))
    finally:
        background.cancel()
        await store.stop()


def _keep_certificate(reloader: CertificateReloader, controller: CertificateController | None, metrics: ServerMetrics) -> Coroutine[Any, Any, None]:
    """The files watched for changes, or the certificate controller, which reloads them itself."""
    if controller is None:
        return reloader.run()
    controller.reload = reloader.check
    metrics.registry.register(CertificateCollector(controller))
    return controller.run()


def _stop_on_signals(settings: ServeSettings, servers: list[tuple[Server, socket.socket]]) -> None:
    """SIGTERM or SIGINT: the webhooks' server drains (the first of ``servers``), and every listener
    closes after ``--shutdown-delay``; a second SIGINT cuts the drain short."""
    loop = asyncio.get_running_loop()
    server = servers[0][0]

    def stop_all() -> None:
        for each, _ in servers:
            each.should_exit = True

    def begin_shutdown(signum: signal.Signals) -> None:
        if server.lifecycle.draining:
            for each, _ in servers:
                each.force_exit = signum == signal.SIGINT
            return
        log.info("received %s: readiness off, closing the listener in %g s", signum.name, settings.shutdown_delay)
        server.begin_draining()
        loop.call_later(settings.shutdown_delay, stop_all)

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, begin_shutdown, signum)
