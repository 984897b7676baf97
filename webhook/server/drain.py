"""The uvicorn server as ``webhook serve`` runs it: TLS handshakes bounded, and a drain that loses no
request and ends in bounded time.

uvicorn's own shutdown closes every idle connection at once, so a client that has just written a
request on one loses it (the API server does not retry a POST it has written), and it then waits
for every TLS close, which a peer that does not read holds for 30 s. Here, once the listener has
closed (``shutdown``):

1. requests under way are answered, each closing its connection after its response;
2. idle connections, and those whose handshake completes now, get ``GRACE`` seconds to deliver a
   request, which is answered the same way (``ServerProtocol.drain``);
3. the drain ends when no connection and no request is left, and at least ``GRACE`` after the last
   connection was accepted, so that a handshake still under way at the close can complete;
4. whatever is left at ``--drain-timeout`` is aborted, so no peer can hold the exit. A request
   cut off this way ends as one whose client has gone (the drain's warning is its only line); one
   still deciding after a short ``CUT_GRACE`` is cancelled.

uvicorn's signal handlers are left out: ``webhook.server.run`` installs its own on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator, Mapping

import uvicorn

from webhook.server.budget import Budget
from webhook.server.connection.limits import Limits
from webhook.server.connection.protocol import ServerProtocol
from webhook.server.connection.turns import LoopTurn
from webhook.server.endpoint import WebhookEndpoint
from webhook.server.lifecycle import GRACE, Lifecycle

log = logging.getLogger(__name__)

POLL = 0.05

CUT_GRACE = 0.2
"""Seconds the requests of aborted connections get to see their clients gone (a read or a write
returns at once) before those still deciding are cancelled."""


class Server(uvicorn.Server):
    def __init__(
        self,
        config: uvicorn.Config,
        lifecycle: Lifecycle,
        budget: Budget,
        limits: Limits,
        drain_timeout: float,
        webhooks: Mapping[bytes, WebhookEndpoint] | None = None,
    ) -> None:
        super().__init__(config)
        self.webhooks = webhooks or {}
        """The endpoints each connection answers itself (``webhook.server.connection.exchanges``), by path."""
        self.lifecycle = lifecycle
        self.budget = budget
        self.limits = limits
        self.drain_timeout = drain_timeout

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    def begin_draining(self) -> None:
        """SIGTERM: from now on every response closes its connection (``lifecycle.draining``)."""
        self.lifecycle.draining = True
        for connection in list(self.server_state.connections):
            if isinstance(connection, ServerProtocol):
                connection.begin_draining()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Serves on ``sockets`` (bound by the caller) with each connection's protocol made here,
        the TLS handshake bounded by the header timeout, as Go's server bounds it, and the TLS
        close (which first sends what is left to send) by the write timeout."""
        assert sockets, "webhook serve binds its socket itself"
        loop = asyncio.get_running_loop()
        turn = LoopTurn(loop)

        def protocol() -> ServerProtocol:
            return ServerProtocol(
                config=self.config,
                server_state=self.server_state,
                app_state=self.lifespan.state,
                _loop=loop,
                lifecycle=self.lifecycle,
                budget=self.budget,
                limits=self.limits,
                turn=turn,
                webhooks=self.webhooks,
            )

        self.servers = [
            await loop.create_server(
                protocol,
                sock=sock,
                ssl=self.config.ssl,
                backlog=self.config.backlog,
                ssl_handshake_timeout=self.limits.header_timeout if self.config.ssl else None,
                ssl_shutdown_timeout=self.limits.write_timeout if self.config.ssl else None,
            )
            for sock in sockets
        ]
        self.started = True

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.drain_timeout
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        self.lifecycle.closed = True
        connections = self.server_state.connections
        log.info("listener closed; draining %d connections (%d requests under way)", len(connections), self._under_way())
        for connection in list(connections):
            if isinstance(connection, ServerProtocol):
                connection.drain()
        if await self._drained(deadline):
            return
        why = "forced to stop" if self.force_exit else f"drain not finished after {self.drain_timeout:g} s"
        log.warning("%s: %d connections aborted, %d requests cancelled", why, len(connections), self._under_way())
        self.lifecycle.dropped["drain_timeout"] += len(connections)
        await self._cut()

    def _under_way(self) -> int:
        """Connections with a request being read, decided or answered: a webhook's request waiting
        for the rest of its body is not a task (``webhook.server.connection.exchanges``), a probe's is."""
        return sum(not connection.idle() for connection in self.server_state.connections if isinstance(connection, ServerProtocol))

    async def _drained(self, deadline: float) -> bool:
        """Whether every connection and request ended (and no connection was accepted within
        ``GRACE``) before ``deadline`` or a forced exit."""
        loop = asyncio.get_running_loop()
        connections, tasks = self.server_state.connections, self.server_state.tasks
        while not self.force_exit and loop.time() < deadline:
            if not connections and not tasks and loop.time() >= self.lifecycle.last_accepted + GRACE:
                return True
            await asyncio.sleep(POLL)
        return False

    async def _cut(self) -> None:
        """Aborts every connection; their requests end as their clients' going ends them (a read or
        a write returns at once), and those still deciding after ``CUT_GRACE`` are cancelled."""
        for connection in list(self.server_state.connections):
            connection.transport.abort()
        tasks = list(self.server_state.tasks)
        if not tasks:
            return
        await asyncio.wait(tasks, timeout=CUT_GRACE)
        deciding = [task for task in tasks if not task.done()]
        for task in deciding:
            task.cancel()
        if deciding:
            await asyncio.wait(deciding, timeout=CUT_GRACE)
