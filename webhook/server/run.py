"""``webhook serve``: the app on uvicorn over HTTPS, with certificate reload and graceful shutdown.

Shutdown (SIGTERM or SIGINT): ``/readyz`` fails at once and every response closes its connection,
while the listener still accepts for ``--shutdown-delay`` seconds; then the listener closes and the
connections are drained within ``--drain-timeout`` (``webhook.server.drain``), and the process exits
0. uvicorn's own signal capture is replaced because it re-raises the signal after a clean shutdown
(exit 143); a second SIGINT cuts the drain short.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import socket

import uvicorn
import uvloop
from fastapi import FastAPI

from webhook import logs
from webhook.errors import CommandError
from webhook.server.app import create_app
from webhook.server.budget import Budget
from webhook.server.connections import ServerProtocol
from webhook.server.drain import Server
from webhook.server.lifecycle import Lifecycle
from webhook.server.limits import Limits
from webhook.server.metrics import ServerMetrics
from webhook.server.tls import CertificateReloader, check_files
from webhook.settings import ServeSettings
from webhook.stores.base import ObjectStore, StoreError

log = logging.getLogger(__name__)


def uvicorn_config(settings: ServeSettings, app: FastAPI) -> uvicorn.Config:
    """The production configuration; ``build_server`` makes the ``Server`` that runs it."""
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
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
    """The server for ``app`` as ``webhook serve`` runs it (``lifecycle`` and ``budget`` are the app's)."""
    config = uvicorn_config(settings, app)
    config.load()
    budget = budget or Budget(settings.max_held_bytes)
    return Server(config, lifecycle, budget, Limits.of(settings), settings.drain_timeout)


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
    check_files(settings.tls_cert, settings.tls_key)
    from webhook.stores import build_store

    with listen(settings.host, settings.port) as sock:
        try:
            store = build_store(settings)
        except StoreError as err:
            raise CommandError(str(err)) from None
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(_serve(settings, store, sock))
    return 0


async def _serve(settings: ServeSettings, store: ObjectStore, sock: socket.socket) -> None:
    try:
        await store.start()
    except StoreError as err:
        raise CommandError(str(err)) from None
    lifecycle = Lifecycle()
    budget = Budget(settings.max_held_bytes)
    metrics = ServerMetrics(store, lifecycle, budget)
    app = create_app(settings, store, metrics=metrics, lifecycle=lifecycle, budget=budget)
    server = build_server(settings, app, lifecycle, budget)
    assert server.config.ssl is not None
    reloader = CertificateReloader(server.config.ssl, settings.tls_cert, settings.tls_key, metrics, settings.cert_reload_interval)
    loop = asyncio.get_running_loop()

    def begin_shutdown(signum: signal.Signals) -> None:
        if lifecycle.draining:
            server.force_exit = signum == signal.SIGINT
            return
        log.info("received %s: readiness off, closing the listener in %g s", signum.name, settings.shutdown_delay)
        server.begin_draining()
        loop.call_later(settings.shutdown_delay, setattr, server, "should_exit", True)

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, begin_shutdown, signum)
    reloading = asyncio.create_task(reloader.run())
    # Everything built so far (modules, the store, the app) lives as long as the process: moved out
    # of the collector's view, so full collections stop walking it and the latency tail shrinks.
    gc.collect()
    gc.freeze()
    log.info("serving https://%s:%d (%d PodCliqueSets in the store)", settings.host, settings.port, store.size)
    try:
        await server.serve(sockets=[sock])
    finally:
        reloading.cancel()
        await store.stop()
