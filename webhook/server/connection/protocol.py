"""Each connection's HTTP protocol: uvicorn's httptools protocol with its heads bounded
(``heads``), the webhook requests it answers itself (``exchanges``), bounds on the time a client
can hold it, and its part in a graceful shutdown.

uvicorn times out a connection only while it is idle between requests (``--keep-alive-timeout``).
One that never completes a request head (it sends nothing after the TLS handshake, or half a
request line) would hold its file descriptor for ever, so a timer runs from the moment the
connection is accepted, and on a kept-alive connection from the first byte of the next request,
until the head is complete; when it fires the connection is dropped (``--header-timeout``). The TLS
handshake is bounded by the same time (``webhook.server.drain``). Bodies have their own timeout
(``--body-timeout``, in the endpoint). An answer its client does not take backs up in the
transport's buffers: from the moment it does (``pause_writing``) the client has ``--write-timeout``
to take all of it, then the connection is dropped and its buffers freed, rather than kept for the
keep-alive timeout.

While the server drains (``Lifecycle``), every request's response closes its connection, and once
the listener has closed an idle connection gets ``GRACE`` seconds to deliver a request before it is
dropped. A request already under way is always answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from webhook.server.budget import Budget
from webhook.server.connection.exchanges import WebhookExchanges
from webhook.server.connection.limits import WRITE_HIGH_WATER, Limits
from webhook.server.endpoint import WebhookEndpoint
from webhook.server.lifecycle import GRACE, Lifecycle


class TurnWrites:
    """Whether a turn of the event loop has written an answer yet; one for all the connections of
    a server.

    Under load one turn of the loop reads the requests of several connections, and each is decided
    as it arrives. Writing each answer as soon as it is decided puts its encryption and its
    ``send`` (on loopback the receiving side's network stack as well) between one decision and
    the next, which then finds little of what it needs in the processor's caches. So the first
    answer of a turn is written at once (a lone request, the usual case below saturation, waits for
    nothing) and the others of the turn are held by their connections (``CoalescedWrites``) and
    written at its end, one after the other."""

    __slots__ = ("loop", "written")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.written = False

    def first(self) -> bool:
        """Whether this is the turn's first answer (from now on one has been written)."""
        if self.written:
            return False
        self.written = True
        self.loop.call_soon(self._turn_ended)
        return True

    def _turn_ended(self) -> None:
        self.written = False


class CoalescedWrites:
    """The connection's transport, a response's head sent with what follows it, and a whole
    answer held to the end of the loop's turn unless it is the turn's first (``TurnWrites``).

    uvicorn writes a response's head and its body apart; over TLS each write is its own record and
    its own ``send``. A head alone (a small write ending in the blank line that ends a head) is
    held until the next write or the end of the loop's turn, whichever comes first, and goes out
    with it: one record and one system call per ordinary answer. What is held is a head, or the
    answers of one turn (more than one only when a client pipelines), never a large answer's pieces,
    which meet the transport's flow control as before; it goes out before anything written after
    it, and anything that ends the connection hands it over first."""

    __slots__ = ("transport", "loop", "turns", "held")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop, turns: TurnWrites) -> None:
        self.transport = transport
        self.loop = loop
        self.turns = turns
        self.held: bytes | None = None

    def write(self, data: bytes) -> None:
        if self.held is not None:
            data, self.held = self.held + data, None
            self.transport.write(data)
        elif len(data) <= HELD_WRITE and data[-4:] == b"\r\n\r\n":
            self._hold(data)
        else:
            self.transport.write(data)

    def write_answer(self, data: bytes) -> None:
        """A whole answer (the webhooks', ``exchanges``): at once when it is the turn's first, else
        held to the turn's end."""
        if self.turns.first():
            self.write(data)
        else:
            self._hold(data)

    def _hold(self, data: bytes) -> None:
        """``data`` after what is held, handed over at the end of the loop's turn at the latest."""
        if self.held is None:
            self.held = data
            self.loop.call_soon(self.flush)
        else:
            self.held += data

    def flush(self) -> None:
        """Hands over what is held, unless the connection has gone meanwhile."""
        if self.held is not None:
            data, self.held = self.held, None
            if not self.transport.is_closing():
                self.transport.write(data)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def abort(self) -> None:
        self.held = None
        self.transport.abort()

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


HELD_WRITE = 4096
"""Bytes a write may have and be held for the next: a response head."""


class ServerProtocol(WebhookExchanges):
    def __init__(
        self,
        *args: Any,
        lifecycle: Lifecycle,
        budget: Budget,
        limits: Limits,
        turns: TurnWrites,
        webhooks: Mapping[bytes, WebhookEndpoint] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, lifecycle=lifecycle, budget=budget, limits=limits, webhooks=webhooks or {}, **kwargs)
        self.turns = turns
        """Shared by the server's connections: which answer is the loop's turn's first."""
        # Made when the connection is accepted, before the TLS handshake: the head is due from now.
        self.accepted = self.loop.time()
        lifecycle.last_accepted = self.accepted
        self.head_timer: asyncio.TimerHandle | None = None
        self.write_timer: asyncio.TimerHandle | None = None
        self.in_grace = False
        """The timer running is the drain's grace, not the header timeout."""

    # --- the header timeout ------------------------------------------------------------------------

    def _arm(self, delay: float, grace: bool = False) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
        self.head_timer = self.loop.call_later(delay, self._expire)
        self.in_grace = grace

    def _disarm(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def _expire(self) -> None:
        """No complete head in time, or the grace is over: dropped at once. There is no answer to
        send, and a peer that does not read would otherwise hold a TLS close open."""
        self.head_timer = None
        if self.idle():
            self.lifecycle.dropped["drained_idle" if self.in_grace else "header_timeout"] += 1
            self.transport.abort()
        else:
            # Half a pipelined head behind a request in flight: that request is answered, then the
            # connection closes.
            self._close_after_response()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        transport.set_write_buffer_limits(WRITE_HIGH_WATER)
        self.transport = CoalescedWrites(transport, self.loop, self.turns)  # type: ignore[assignment]
        if self.lifecycle.closed:
            self._arm(min(GRACE, self.limits.header_timeout), grace=True)
        else:
            self._arm(max(self.limits.header_timeout - (self.loop.time() - self.accepted), 0.0))

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._stop_write_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        WebhookExchanges.data_received(self, data)
        if self.in_grace and self.in_head:
            # A request begun within the grace gets the whole header timeout to finish its head.
            self._disarm()
        # Bytes on an idle kept-alive connection stop uvicorn's keep-alive timer: a head that has
        # begun, or bytes that begin none (blank lines), start the header timer in its place.
        if (
            self.head_timer is None
            and self.timeout_keep_alive_task is None
            and (self.in_head or self.idle())
            and not self.transport.is_closing()
        ):
            self._arm(self.limits.header_timeout)

    def on_headers_complete(self) -> None:
        self._disarm()
        WebhookExchanges.on_headers_complete(self)
        if self.lifecycle.draining and self.cycle is not None:
            self.cycle.keep_alive = False

    def _refuse(self, status: int, message: str) -> None:
        self._disarm()
        super()._refuse(status, message)

    # --- the write timeout ---------------------------------------------------------------------------

    def pause_writing(self) -> None:
        super().pause_writing()
        if self.write_timer is None:
            self.write_timer = self.loop.call_later(self.limits.write_timeout, self._write_expired)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self.cycle is None or self.cycle.response_complete:
            self._stop_write_timer()

    def _stop_write_timer(self) -> None:
        if self.write_timer is not None:
            self.write_timer.cancel()
            self.write_timer = None

    def _write_expired(self) -> None:
        """The answer that backed up is still not taken in full: dropped with its buffers."""
        self.write_timer = None
        if self.flow.write_paused or not (self.cycle is None or self.cycle.response_complete):
            self.lifecycle.dropped["write_timeout"] += 1
            self.transport.abort()

    # --- draining ------------------------------------------------------------------------------------

    def _close_after_response(self) -> None:
        if self.cycle is not None:
            self.cycle.keep_alive = False
        for cycle, _ in self.pipeline:
            cycle.keep_alive = False

    def begin_draining(self) -> None:
        """SIGTERM: the requests under way say ``Connection: close`` in their responses too."""
        self._close_after_response()

    def drain(self) -> None:
        """The listener has closed. A request under way is answered and its connection closes after
        it; a head under way keeps its timer; an idle connection gets the grace."""
        if not self.idle():
            self._close_after_response()
        elif not self.in_head:
            self._arm(min(GRACE, self.limits.header_timeout), grace=True)
