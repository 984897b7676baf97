"""The connection guard: the limits on a connection that uvicorn's options cannot set with httptools.

uvicorn builds, for each connection, this ``asyncio.Protocol`` of ours (``uvicorn.Config(http=...)``),
which builds uvicorn's own httptools protocol and passes every event on to it. It never parses or
writes HTTP: it counts bytes and time, and drops the connection past a limit.

- The head: ``--header-timeout`` from the TLS handshake, and from the first byte after each answer,
  until the application is entered for the request.
- What the connection holds beyond the bodies delivered to the application (a head still arriving,
  a chunked body's framing and trailers, what is read ahead): at most one read past
  ``--max-header-bytes``, and all of it in the server's budget (``webhook.server.budget``).
- Writes: an answer that backs up (``pause_writing``) has ``--write-timeout`` to be taken in full,
  and a connection its answer closed as long for its TLS close.

It keeps the clock of the body timeout too (``webhook.server.limits`` finds a request's guard by its
``client``, the peer, in ``Connections.open``). uvicorn is told of a connection at its first byte,
so that its shutdown, which closes every connection it knows to be idle, leaves alone one whose
client is about to send its first request. DECISIONS.md §2.3 has why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

import uvicorn

from webhook.server.budget import Budget
from webhook.settings import ServeSettings

WRITE_HIGH_WATER = 64 * 1024
"""Bytes of answers waiting in a connection's transport above which its writer is paused (and the
write timeout runs): uvloop's default would let a client that does not read leave far more unseen."""

Peer = tuple[str, int]


async def _unused(scope: Any, receive: Any, send: Any) -> None:
    """The app of the configuration that finds uvicorn's protocol: it serves nothing."""


def passed(due: float | None, now: float) -> bool:
    return due is not None and due <= now


class Connections:
    """One server's open connections, by peer, and the limits their guards keep."""

    def __init__(self, settings: ServeSettings, budget: Budget, dropped: dict[str, int]) -> None:
        self.settings = settings
        self.budget = budget
        self.dropped = dropped
        self.open: dict[Peer, ConnectionGuard] = {}
        config = uvicorn.Config(_unused, http="httptools", log_config=None, proxy_headers=False)
        config.load()
        self.http = config.http_protocol_class

    def protocol(self) -> type[asyncio.Protocol]:
        """What ``uvicorn.Config(http=...)`` takes: a guard of these connections for each one."""
        connections = self

        class Guard(ConnectionGuard):
            def __init__(self, **uvicorn_arguments: Any) -> None:
                super().__init__(connections, **uvicorn_arguments)

        return Guard

    def idle(self) -> int:
        """Connections uvicorn knows with no request under way (its shutdown closes them at once)."""
        return sum(guard.started and not guard.in_request for guard in self.open.values())

    def drop_all(self, reason: str) -> None:
        for guard in list(self.open.values()):
            guard.drop(reason)


class ConnectionGuard(asyncio.Protocol):
    def __init__(self, connections: Connections, **uvicorn_arguments: Any) -> None:
        self.connections, self.limits = connections, connections.settings
        self.inner: asyncio.Protocol = connections.http(**uvicorn_arguments)
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport
        self.peer: Peer | None = None
        self.started = self.ended = self.in_request = self.paused = False
        self.received = self.delivered = self.held = 0
        """Bytes received and body bytes delivered since the request (or the next) began; bytes
        held in the budget for the difference."""
        self.head_due: float | None = None
        self.body_due: float | None = None
        self.write_due: float | None = None
        self.late_body: Callable[[], None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at = 0.0

    # --- asyncio's protocol, passed on to uvicorn's --------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's TLS transport is one, unregistered
        self.transport.set_write_buffer_limits(WRITE_HIGH_WATER)
        peer = transport.get_extra_info("peername")
        if isinstance(peer, tuple | list) and len(peer) >= 2:
            self.peer = (str(peer[0]), int(peer[1]))
            self.connections.open[self.peer] = self
        self.head_due = self.due_in(self.limits.header_timeout)

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():
            return  # its last answer closed it: nothing more is read
        if not self.started:
            self.started = True
            self.inner.connection_made(self.transport)
        if self.head_due is None and not self.in_request:
            self.head_due = self.due_in(self.limits.header_timeout)
        if self.hold(len(data)):
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.started else None

    def pause_writing(self) -> None:
        self.paused = True
        self.write_due = self.write_due or self.due_in(self.limits.write_timeout)
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.paused = False
        if not self.in_request:
            self.write_due = None
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.end(exc)

    # --- what the request limits tell -----------------------------------------------------------------

    def request_started(self) -> None:
        self.in_request = True
        self.head_due = None
        self.release(0)

    def time_body(self, late: Callable[[], None] | None) -> None:
        """``late`` is called if the body is not read in full within ``--body-timeout`` from now;
        None: it has been."""
        self.late_body = late
        self.body_due = None if late is None else self.due_in(self.limits.body_timeout)

    def body_delivered(self, size: int) -> None:
        self.delivered += size
        self.release(self.received - self.delivered)

    def request_ended(self) -> None:
        if self.ended:
            return
        self.in_request = False
        self.time_body(None)
        self.release(0)
        if self.transport.is_closing():
            self.write_due = self.write_due or self.due_in(self.limits.write_timeout)
        elif not self.paused:
            self.write_due = None

    # --- the limits -----------------------------------------------------------------------------------

    def hold(self, more: int) -> bool:
        """Counts ``more`` bytes received; False when the connection is dropped for them: it held
        more than ``--max-header-bytes`` beyond its bodies already (one read may take it past the
        limit, as one read may bring a head and the start of its body), or the budget cannot take them."""
        if self.received - self.delivered > self.limits.max_header_bytes:
            self.drop("header_too_large")
            return False
        self.received += more
        holding = self.received - self.delivered
        if holding > self.held:
            if not self.connections.budget.take(holding - self.held, self.held):
                self.drop("over_budget")
                return False
            self.held = holding
        return True

    def release(self, holding: int) -> None:
        """From now on ``holding`` bytes are held (none: counted afresh from the next byte)."""
        if holding <= 0:
            holding = self.received = self.delivered = 0
        if holding < self.held:
            self.connections.budget.release(self.held - holding)
            self.held = holding

    def due_in(self, seconds: float) -> float:
        """A deadline ``seconds`` from now, the connection's timer set to fire by then.

        Every request sets the head's deadline and the body's and clears them again, far more often
        than one passes: they are times the one timer reads when it fires, not timers of their own."""
        due = self.loop.time() + seconds
        if (self.timer is None or self.timer_at > due) and not self.ended:
            if self.timer is not None:
                self.timer.cancel()
            self.timer, self.timer_at = self.loop.call_at(due, self.tick), due
        return due

    def tick(self) -> None:
        """The connection's timer: a deadline that has passed is acted on, and the timer set for the next."""
        self.timer = None
        now = self.loop.time()
        if passed(self.head_due, now):
            self.drop("header_timeout")
        elif passed(self.write_due, now):
            self.drop("write_timeout" if self.paused else None)  # an answer not taken, or a TLS close
        elif passed(self.body_due, now) and self.late_body is not None:
            self.late_body()
        dues = [due for due in (self.head_due, self.body_due, self.write_due) if due is not None and due > now]
        if dues:
            self.due_in(min(dues) - now)

    def drop(self, reason: str | None) -> None:
        """Aborts the connection, and tells uvicorn at once that its client has gone."""
        if self.ended:
            return
        if reason is not None:
            self.connections.dropped[reason] += 1
        self.transport.abort()
        self.end(None)

    def end(self, exc: Exception | None) -> None:
        if self.ended:
            return
        self.ended = True
        if self.timer is not None:
            self.timer.cancel()
        self.release(0)
        if self.peer is not None and self.connections.open.get(self.peer) is self:
            del self.connections.open[self.peer]
        if self.started:
            self.inner.connection_lost(exc)
