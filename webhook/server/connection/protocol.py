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
from webhook.server.connection.turns import CoalescedWrites, LoopTurn
from webhook.server.endpoint import WebhookEndpoint
from webhook.server.lifecycle import GRACE, Lifecycle


class ServerProtocol(WebhookExchanges):
    def __init__(
        self,
        *args: Any,
        lifecycle: Lifecycle,
        budget: Budget,
        limits: Limits,
        turn: LoopTurn,
        webhooks: Mapping[bytes, WebhookEndpoint] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, lifecycle=lifecycle, budget=budget, limits=limits, turn=turn, webhooks=webhooks or {}, **kwargs)
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
        self.transport = CoalescedWrites(transport, self.loop, self.turn)  # type: ignore[assignment]
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
