"""Request heads bounded in bytes, line length and lines, before any application code sees them.

httptools has no limit on a request head: it gathers a header line for as long as it keeps coming,
and uvicorn keeps every header. So the bytes of a head are counted as they arrive, and the parser is
given no more than ``--max-header-bytes`` of them before the head must be complete; a line over
``--max-header-line-bytes`` is refused as soon as the line under way is known to be over it, and
``on_header`` refuses more than ``--max-headers`` lines. A head over a limit is answered 431 and its
connection closed, as Go's server answers past its MaxHeaderBytes. The trailers of a chunked body
are a head as well: what arrives during a body and is not the body (trailers and the chunks'
framing) is bounded the same way. A head still arriving holds its bytes in the server's budget
(``webhook.server.budget``) and is answered 503 when the budget cannot take them.

Bytes are counted as they are received, before the parser sees them, so a head that begins in the
data that ended the previous request (pipelined) is counted as all of that data: a little early to
refuse, never late.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from webhook.server.budget import BUSY, Budget
from webhook.server.lifecycle import Lifecycle
from webhook.server.limits import REFUSAL_LINGER, HeadRefused, Limits, refusal


class HeadLimits(HttpToolsProtocol):
    def __init__(self, *args: Any, lifecycle: Lifecycle, budget: Budget, limits: Limits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lifecycle = lifecycle
        self.budget = budget
        self.limits = limits
        self.in_head = False
        """A request head has begun and is not complete."""
        self.in_body = False
        """A request head is complete and its body is not: what arrives is the body's."""
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
        self.linger: asyncio.TimerHandle | None = None
        """Cuts a refused connection off once its client has had time to read the refusal."""

    def _idle(self) -> bool:
        """No request is being answered or waits to be (a pipelined one)."""
        return (self.cycle is None or self.cycle.response_complete) and not self.pipeline

    def connection_lost(self, exc: Exception | None) -> None:
        self._release_head()
        if self.linger is not None:
            self.linger.cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.chunk_size = len(data)
        if self.in_body:
            self._feed_body(data)
        else:
            self._feed_head(data)
        if self.in_head and not self.transport.is_closing():
            self._head_under_way()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.in_head = True
        if self.head_bytes == 0:
            # Begun in data that ended a body or another head (pipelined), so not counted yet: at
            # most all of that data, whose lines are measured from the next data on.
            self.head_bytes = self.line_mark = self.chunk_size
        else:
            self.line_mark = self.head_bytes - self.chunk_size

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
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        self.framing -= len(body)
        self.line_mark = self.framing
        super().on_body(body)

    def on_message_complete(self) -> None:
        self.in_body = False
        super().on_message_complete()

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
        self.parser = httptools.HttpRequestParser(self)
        self.headers, self.url = [], b""
        if self._idle() and not self.in_body:
            self.transport.write(refusal(status, message))
            self.transport.close()
            self.linger = self.loop.call_later(REFUSAL_LINGER, self.transport.abort)
        else:
            self.transport.abort()
        self.in_head = self.in_body = False
