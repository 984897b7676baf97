"""Each connection's HTTP protocol: uvicorn's httptools protocol with bounds on the time and the
bytes a client can make it spend, and its part in a graceful shutdown.

Time. uvicorn times out a connection only while it is idle between requests
(``--keep-alive-timeout``). One that never completes a request head (it sends nothing after the TLS
handshake, or half a request line) would hold its file descriptor for ever, so a timer runs from
the moment the connection is accepted, and on a kept-alive connection from the first byte of the
next request, until the head is complete; when it fires the connection is dropped
(``--header-timeout``). The TLS handshake is bounded by the same time (``webhook.server.drain``).
Bodies have their own timeout (``--body-timeout``, in the endpoint). An answer its client does not
take backs up in the transport's buffers: from the moment it does (``pause_writing``) the client
has ``--write-timeout`` to take all of it, then the connection is dropped and its buffers freed,
rather than kept for the keep-alive timeout.

Bytes. httptools has no limit on a request head: it gathers a header line for as long as it keeps
coming, and uvicorn keeps every header. So the bytes of a head are counted as they arrive, and the
parser is given no more than ``--max-header-bytes`` of them before the head must be complete;
``on_header`` refuses a line over ``--max-header-line-bytes`` and more than ``--max-headers`` lines.
A head over a limit is answered 431 and its connection closed, as Go's server answers past its
MaxHeaderBytes. The trailers of a chunked body are a head as well: what arrives during a body and is
not the body (trailers and the chunks' framing) is bounded the same way. A head still arriving holds
its bytes in the server's budget (``webhook.server.budget``) and is answered 503 when the budget
cannot take them.

While the server drains (``Lifecycle``), every request's response closes its connection, and once
the listener has closed an idle connection gets ``GRACE`` seconds to deliver a request before it is
dropped. A request already under way is always answered.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from webhook.server.budget import BUSY, Budget
from webhook.server.lifecycle import GRACE, Lifecycle
from webhook.server.limits import REFUSAL_LINGER, WRITE_HIGH_WATER, HeadRefused, Limits, refusal


class ServerProtocol(HttpToolsProtocol):
    def __init__(self, *args: Any, lifecycle: Lifecycle, budget: Budget, limits: Limits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lifecycle = lifecycle
        self.budget = budget
        self.limits = limits
        # Made when the connection is accepted, before the TLS handshake: the head is due from now.
        self.accepted = self.loop.time()
        lifecycle.last_accepted = self.accepted
        self.head_timer: asyncio.TimerHandle | None = None
        self.write_timer: asyncio.TimerHandle | None = None
        self.in_head = False
        """A request head has begun and is not complete."""
        self.in_body = False
        """A request head is complete and its body is not: what arrives is the body's."""
        self.in_grace = False
        """The timer running is the drain's grace, not the header timeout."""
        self.head_bytes = 0
        """Bytes received for the request head under way or to come, counted before parsing."""
        self.head_held = 0
        """Bytes of an incomplete head counted in the budget."""
        self.line_mark = 0
        """``head_bytes`` (``framing`` in a body) when the parser last reported a whole line or body
        bytes: all that came after belongs to the line under way, which httptools gathers without a
        word until it ends."""
        self.framing = 0
        """Bytes received during the body that were not the body's (chunk framing and trailers)."""
        self.chunk_size = 0
        """Size of the data being parsed (a head that begins inside it has at most that many bytes there)."""

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

    def _idle(self) -> bool:
        """No request is being answered or waits to be (a pipelined one)."""
        return (self.cycle is None or self.cycle.response_complete) and not self.pipeline

    def _expire(self) -> None:
        """No complete head in time, or the grace is over: dropped at once. There is no answer to
        send, and a peer that does not read would otherwise hold a TLS close open."""
        self.head_timer = None
        if self._idle():
            self.lifecycle.dropped["drained_idle" if self.in_grace else "header_timeout"] += 1
            self.transport.abort()
        else:
            # Half a pipelined head behind a request in flight: that request is answered, then the
            # connection closes.
            self._close_after_response()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        transport.set_write_buffer_limits(WRITE_HIGH_WATER)
        if self.lifecycle.closed:
            self._arm(min(GRACE, self.limits.header_timeout), grace=True)
        else:
            self._arm(max(self.limits.header_timeout - (self.loop.time() - self.accepted), 0.0))

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._release_head()
        self._stop_write_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.chunk_size = len(data)
        if self.in_body:
            self._feed_body(data)
        else:
            self._feed_head(data)
        if self.in_head and not self.transport.is_closing():
            self._head_under_way()
        # Bytes on an idle kept-alive connection stop uvicorn's keep-alive timer: a head that has
        # begun, or bytes that begin none (blank lines), start the header timer in its place.
        if (
            self.head_timer is None
            and self.timeout_keep_alive_task is None
            and (self.in_head or self._idle())
            and not self.transport.is_closing()
        ):
            self._arm(self.limits.header_timeout)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.in_head = True
        if self.head_bytes == 0:
            # Begun in data that ended a body or another head (pipelined), so not counted yet: at
            # most all of that data, whose lines are measured from the next data on.
            self.head_bytes = self.line_mark = self.chunk_size
        else:
            self.line_mark = self.head_bytes - self.chunk_size
        if self.in_grace:
            # A request begun within the grace gets the whole header timeout to finish its head.
            self._disarm()

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(self.headers) >= self.limits.headers:
            raise HeadRefused(f"request has more than {self.limits.headers} header lines")
        if len(name) + len(value) > self.limits.header_line_bytes:
            raise HeadRefused(self._line_too_long())
        self.line_mark = self.framing if self.in_body else self.head_bytes
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self.in_head = False
        self.in_body = True
        self.head_bytes = self.framing = 0
        if self.head_held:
            self._release_head()
        self._disarm()
        super().on_headers_complete()
        if self.lifecycle.draining and self.cycle is not None:
            self.cycle.keep_alive = False

    def on_body(self, body: bytes) -> None:
        self.framing -= len(body)
        self.line_mark = self.framing
        super().on_body(body)

    def on_message_complete(self) -> None:
        self.in_body = False
        super().on_message_complete()

    # --- the bytes of a head -------------------------------------------------------------------------

    def _feed(self, data: bytes) -> None:
        """uvicorn's ``data_received``, with the head limits' refusals (raised in ``on_header``)
        answered 431 rather than 400."""
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as err:
            if isinstance(err.__context__, HeadRefused):
                self._refuse(431, str(err.__context__))
            else:
                self._invalid()
        except httptools.HttpParserError:
            self._invalid()
        except httptools.HttpParserUpgrade:
            self._unsupported_upgrade_warning()

    def _invalid(self) -> None:
        message = "Invalid HTTP request received."
        self.logger.warning(message)
        self.send_400_response(message)

    def _feed_head(self, data: bytes) -> None:
        """Bytes that begin or continue a request head: the parser gets no more of them than the
        head's limit leaves room for, and by then the head must be complete."""
        while True:
            room = self.limits.head_bytes - self.head_bytes
            if len(data) <= room:
                self.head_bytes += len(data)
                self._feed(data)
                return
            room = max(room, 0)
            cycle = self.cycle
            self.head_bytes = self.limits.head_bytes
            self._feed(data[:room])
            if self.transport.is_closing():
                return
            if self.cycle is cycle:
                self._refuse(431, f"request head is longer than the limit of {self.limits.head_bytes} bytes")
                return
            data = data[room:]
            if self.in_body:
                self._feed_body(data)
                return

    def _feed_body(self, data: bytes) -> None:
        self.framing += len(data)
        self._feed(data)
        if not self.in_body:
            return
        if self.framing - self.line_mark > self.limits.header_line_bytes:
            self._refuse(431, self._line_too_long())
        elif self.framing > self.limits.head_bytes:
            self._refuse(431, f"request trailers are longer than the limit of {self.limits.head_bytes} bytes")

    def _line_too_long(self) -> str:
        return f"request line is longer than the limit of {self.limits.header_line_bytes} bytes"

    def _head_under_way(self) -> None:
        """A head incomplete at the end of the data received: a line under way already over its
        limit is refused now, rather than gathered up to the head's limit."""
        if self.head_bytes - self.line_mark > self.limits.header_line_bytes:
            self._refuse(431, self._line_too_long())
        else:
            self._hold_head()

    def _hold_head(self) -> None:
        """A head incomplete at the end of the data received holds its bytes until it completes."""
        more = self.head_bytes - self.head_held
        if more <= 0:
            return
        if self.budget.take(more, self.head_held):
            self.head_held = self.head_bytes
        else:
            self._refuse(503, BUSY)

    def _release_head(self) -> None:
        if self.head_held:
            self.budget.release(self.head_held)
            self.head_held = 0

    def _refuse(self, status: int, message: str) -> None:
        """Answers a head that breaks a limit and closes the connection, the head's bytes freed at
        once. A connection with a request under way is dropped instead: nothing can be written in
        the middle of its answer."""
        self.lifecycle.dropped["over_budget" if status == 503 else "header_too_large"] += 1
        self._release_head()
        self._disarm()
        self.parser = httptools.HttpRequestParser(self)
        self.headers, self.url = [], b""
        if self._idle() and not self.in_body:
            self.transport.write(refusal(status, message))
            self.transport.close()
            self._stop_write_timer()
            self.write_timer = self.loop.call_later(REFUSAL_LINGER, self.transport.abort)
        else:
            self.transport.abort()
        self.in_head = self.in_body = False

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
        if not self._idle():
            self._close_after_response()
        elif not self.in_head:
            self._arm(min(GRACE, self.limits.header_timeout), grace=True)
