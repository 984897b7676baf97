"""Request heads bounded in bytes, line length and lines, before any application code sees them.

httptools has no limit on a request head: it gathers a header line for as long as it keeps coming,
and uvicorn keeps every header. So the bytes of a head are counted as they arrive, and the parser is
given no more than ``--max-header-bytes`` of them before the head must be complete. A head over a
limit is answered 431 and its connection closed, as Go's server answers past its MaxHeaderBytes. A
head still arriving holds its bytes in the server's budget (``webhook.server.budget``) and is
answered 503 when the budget cannot take them.

The lines are looked at where it costs an ordinary request nothing: a head that arrives whole (as
every ordinary request's does) when it is complete, and one that arrives in pieces at the end of
each piece. A line under way is known to be over ``--max-header-line-bytes`` when no line has
ended for that many bytes, and is refused then rather than gathered up to the head's limit. Within
one piece of data the lines may outnumber ``--max-headers`` for a moment: the server reads one
piece at a time, so only one such moment is ever held.

The trailers of a chunked body are a head as well: bytes of a body that bring no body (trailers)
are bounded the same way.

Bytes are counted as they are received, before the parser sees them, so a head that begins in the
data that ended the previous request (pipelined) is counted as all of that data: a little early to
refuse, never late.

The callbacks every request goes through call their base class by name: on Python 3.11 ``super()``
builds an object on every call, which this path would pay several times a request
(docs/PERFORMANCE.md).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from webhook.server.budget import BUSY, Budget
from webhook.server.connection.limits import REFUSAL_LINGER, HeadRefused, Limits, refusal
from webhook.server.lifecycle import Lifecycle


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
        self.lines = 0
        """Header lines the parser had reported when last looked at."""
        self.line_mark = 0
        """Bytes received (of the head, or of trailers) when a line was last seen to end: all that
        came after belongs to the line under way, which httptools gathers without a word."""
        self.trailer_bytes = 0
        """Bytes received during a body since the body last grew (its trailers)."""
        self.chunk_size = 0
        """Size of the data being parsed (a head that begins inside it has at most that many bytes there)."""
        self.linger: asyncio.TimerHandle | None = None
        """Cuts a refused connection off once its client has had time to read the refusal."""

    def idle(self) -> bool:
        """No request is being answered or waits to be (a pipelined one)."""
        return (self.cycle is None or self.cycle.response_complete) and not self.pipeline

    def connection_lost(self, exc: Exception | None) -> None:
        self._release_head()
        if self.linger is not None:
            self.linger.cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        size = self.chunk_size = len(data)
        if self.in_body:
            self._feed_body(data)
        elif size <= self.limits.head_bytes - self.head_bytes:
            self.head_bytes += size
            self._feed(data)
        else:
            self._feed_past_room(data)
        if self.in_head and not self.transport.is_closing():
            self._head_under_way()

    def on_message_begin(self) -> None:
        HttpToolsProtocol.on_message_begin(self)
        self.in_head = True
        self.lines = 0
        if self.head_bytes == 0:
            # Begun in data that ended a body or another head (pipelined), so not counted yet: at
            # most all of that data, whose lines are measured from the next data on.
            self.head_bytes = self.line_mark = self.chunk_size
        else:
            self.line_mark = self.head_bytes - self.chunk_size

    def on_headers_complete(self) -> None:
        if len(self.headers) > self.limits.headers:
            raise HeadRefused(self._too_many_lines())
        if self.head_bytes > self.limits.header_line_bytes:
            self._check_lines()
        self.in_head = False
        self.in_body = True
        self.head_bytes = 0
        if self.head_held:
            self._release_head()
        self._start_request()

    def _start_request(self) -> None:
        """The request whose head is complete and within the limits is handed on."""
        HttpToolsProtocol.on_headers_complete(self)

    def on_message_complete(self) -> None:
        self.in_body = False
        HttpToolsProtocol.on_message_complete(self)

    def _feed(self, data: bytes) -> None:
        """uvicorn's ``data_received``, with the head limits' refusals (raised in parser
        callbacks) answered 431 rather than 400."""
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

    # --- the rare paths: a head over its room, in pieces, or a body that brings no body ------------

    def _feed_past_room(self, data: bytes) -> None:
        """More data than the head's limit leaves room for: the parser gets what fits, and by then
        the head must be complete; what follows is the body or the next request."""
        while data:
            room = max(self.limits.head_bytes - self.head_bytes, 0)
            if len(data) <= room:
                self.head_bytes += len(data)
                self._feed(data)
                return
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
        body = len(self.cycle.body)
        self._feed(data)
        if not self.in_body or self.transport.is_closing():
            return
        if len(self.cycle.body) != body or not self._chunked():
            self.trailer_bytes = self.line_mark = 0
            self.lines = len(self.headers)
            return
        self.trailer_bytes += len(data)
        if self.trailer_bytes > self.limits.head_bytes:
            self._refuse(431, f"request trailers are longer than the limit of {self.limits.head_bytes} bytes")
        else:
            self._check_line_under_way(self.trailer_bytes)

    def _chunked(self) -> bool:
        """Only a chunked body has trailers; bytes of another that bring no body are a body its
        answer did not wait for, which uvicorn reads into the void."""
        return any(name == b"transfer-encoding" and b"chunked" in value.lower() for name, value in self.headers)

    def _head_under_way(self) -> None:
        """A head incomplete at the end of the data received: checked, and held in the budget."""
        if self._check_line_under_way(self.head_bytes):
            self._hold_head()

    def _check_line_under_way(self, received: int) -> bool:
        """Refuses too many lines, or a line under way already over its limit; True when neither."""
        lines = len(self.headers)
        if lines > self.limits.headers:
            self._refuse(431, self._too_many_lines())
            return False
        if lines != self.lines:
            self.lines, self.line_mark = lines, received
        elif received - self.line_mark > self.limits.header_line_bytes:
            self._refuse(431, self._line_too_long())
            return False
        return True

    def _check_lines(self) -> None:
        """A complete head larger than a line's limit: is one of its lines over it?"""
        limit = self.limits.header_line_bytes
        if any(len(name) + len(value) > limit for name, value in self.headers):
            raise HeadRefused(self._line_too_long())

    def _too_many_lines(self) -> str:
        return f"request has more than {self.limits.headers} header lines"

    def _line_too_long(self) -> str:
        return f"request line is longer than the limit of {self.limits.header_line_bytes} bytes"

    def _hold_head(self) -> None:
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
        if self.idle() and not self.in_body:
            self.transport.write(refusal(status, message))
            self.transport.close()
            self.linger = self.loop.call_later(REFUSAL_LINGER, self.transport.abort)
        else:
            self.transport.abort()
        self.in_head = self.in_body = False
