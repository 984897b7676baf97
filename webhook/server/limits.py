"""The limits that need a request's complete head, its body or its answer: an ASGI middleware.

uvicorn hands a request to the application once its head is complete, with no bound on its header
lines, nor on its body's size or time, and writes an answer into the connection's transport whole,
however slowly its client reads. So every request passes through ``RequestLimits`` first:

- a head of more than ``--max-headers`` lines, with a line (a header's name and value, or the
  request target) over ``--max-header-line-bytes``, or whose lines add up to more than
  ``--max-header-bytes``, is answered 431 before the application sees it (a head that grows past
  that without ending is the connection guard's to drop);
- its body, as the application reads it: over ``--max-body-bytes`` is refused 413 (from its
  Content-Length before any of it is read, else as soon as it is over), one not in full within
  ``--body-timeout`` 408, one the server's budget cannot take 503 with ``Retry-After``
  (``webhook.server.budget``). ``receive`` raises ``BodyRefused``, which the webhook endpoint
  answers, counts and logs as any answer;
- a body is held in the budget until its answer begins, and an answer larger than a connection's
  write buffer until it has been handed over, in pieces, each once the one before has been taken
  (a client that does not read then pauses the connection, whose guard times it);
- while the server drains, every response says ``Connection: close``.

Every refusal says ``Connection: close``: the rest of its request may still be on its way. The
connection's guard (``webhook.server.guard``) is told when the request begins, what body it
delivers and when it is over. A request that uvicorn cancels at the drain's end has its connection
dropped, and so ends without a word.
"""

from __future__ import annotations

import asyncio

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webhook.server.budget import BUSY, RETRY_AFTER, SMALL, Budget
from webhook.server.guard import WRITE_HIGH_WATER, ConnectionGuard, Connections
from webhook.server.lifecycle import Lifecycle
from webhook.settings import ServeSettings

CLOSE = (b"connection", b"close")
JSON = (b"content-type", b"application/json")
PIECE = WRITE_HIGH_WATER
"""Bytes of an answer handed to the connection at a time."""

LENGTH_DIGITS = 18
"""A Content-Length of more digits is over any limit (10**18 bytes is an exabyte)."""


def refusal_headers(status: int) -> list[tuple[bytes, bytes]]:
    return [CLOSE, (b"retry-after", RETRY_AFTER)] if status == 503 else [CLOSE]


class BodyRefused(Exception):
    """A body over a limit: the status and the one sentence its client is answered with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = refusal_headers(status)


class RequestLimits:
    def __init__(
        self, app: ASGIApp, settings: ServeSettings, budget: Budget, lifecycle: Lifecycle, connections: Connections | None = None
    ) -> None:
        self.app = app
        self.max_headers = settings.max_headers
        self.max_line = settings.max_header_line_bytes
        self.max_head = settings.max_header_bytes
        self.max_body = settings.max_body_bytes
        self.body_timeout = settings.body_timeout
        self.budget = budget
        self.lifecycle = lifecycle
        self.guards = connections.open if connections is not None else {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        guard = self.guards.get(scope.get("client"))  # type: ignore[arg-type]  # a peer, or None in-process
        if guard is not None:
            guard.request_started()
        request = LimitedRequest(self, receive, send, guard)
        try:
            refusal = request.read_head(scope)
            if refusal is None:
                await self.app(scope, request.receive, request.send)
            else:
                await self.refuse(request, refusal)
        except asyncio.CancelledError:
            if not self.lifecycle.closed:
                raise
            if guard is not None:
                guard.drop("drain_timeout")  # cut off at the drain's end: uvicorn's line says so
        finally:
            request.release()
            if guard is not None:
                guard.request_ended()

    async def refuse(self, request: LimitedRequest, refusal: str) -> None:
        self.lifecycle.dropped["header_too_large"] += 1
        content = orjson.dumps({"error": refusal})
        headers = [JSON, (b"content-length", str(len(content)).encode()), *refusal_headers(431)]
        await request.send({"type": "http.response.start", "status": 431, "headers": headers})
        await request.send({"type": "http.response.body", "body": content})


class LimitedRequest:
    """One request's head, body and answer under the limits."""

    __slots__ = ("limits", "inner_receive", "inner_send", "guard", "length", "begun", "task", "reading", "late", "size", "complete")

    def __init__(self, limits: RequestLimits, receive: Receive, send: Send, guard: ConnectionGuard | None) -> None:
        self.limits = limits
        self.inner_receive = receive
        self.inner_send = send
        self.guard = guard
        self.length: bytes | None = None
        """The body's Content-Length, as its head says it."""
        self.begun = False
        """The application has begun to read the body (and its timeout runs)."""
        self.task: asyncio.Task[object] | None = None
        self.reading = False
        self.late = False
        self.size = 0
        """Bytes of the body held in the budget."""
        self.complete = False

    def read_head(self, scope: Scope) -> str | None:
        """Why the head is refused (431), or None; its Content-Length noted on the way."""
        limits, headers = self.limits, scope["headers"]
        target = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        if len(headers) > limits.max_headers:
            return f"request has more than {limits.max_headers} header lines"
        line, size = limits.max_line, target
        if target > line:
            return f"request line is longer than the limit of {line} bytes"
        for name, value in headers:
            length = len(name) + len(value)
            if length > line:
                return f"request line is longer than the limit of {line} bytes"
            size += length
            if name == b"content-length":
                self.length = value
        if size > limits.max_head:
            return f"request head is longer than the limit of {limits.max_head} bytes"
        return None

    async def receive(self) -> Message:
        if self.complete:
            return await self.inner_receive()
        if not self.begun:
            self.begin()
        if self.late:
            raise self.timed_out()
        self.reading = True
        try:
            message = await self.inner_receive()
        except asyncio.CancelledError:
            if not self.late or self.task is None or self.task.uncancel():
                raise
            raise self.timed_out() from None
        finally:
            self.reading = False
        if message["type"] == "http.request":
            self.take(message)
        return message

    def begin(self) -> None:
        """The first read of the body: refused at once from its Content-Length, or timed by the
        connection's clock (the guard's; a request without a connection, in-process, is not timed)."""
        self.begun = True
        self.check_length()
        if self.guard is not None:
            self.task = asyncio.current_task()
            self.guard.time_body(self.expire)

    def expire(self) -> None:
        """The body timeout: a read under way is cancelled, and answered 408."""
        self.late = True
        if self.reading and self.task is not None:
            self.task.cancel()

    def timed_out(self) -> BodyRefused:
        return BodyRefused(408, f"request body not received in full within {self.limits.body_timeout:g} s")

    def check_length(self) -> None:
        """Refuses a body whose Content-Length is over the limit, or a large one the budget cannot
        take now, before any of it is read."""
        if self.length is None or not self.length.isdigit():
            return
        # Measured before ``int`` reads it: ``int`` refuses text of more than 4300 digits.
        digits = self.length.lstrip(b"0")
        length = int(digits or b"0") if len(digits) <= LENGTH_DIGITS else self.limits.max_body + 1
        if length > self.limits.max_body:
            raise self.too_large()
        # A small body is taken as it comes, at no cost to an ordinary request.
        if length > SMALL and not self.limits.budget.fits(length):
            raise self.busy()

    def take(self, message: Message) -> None:
        chunk = len(message.get("body", b""))
        if self.guard is not None:
            self.guard.body_delivered(chunk)
        if self.size + chunk > self.limits.max_body:
            raise self.too_large()
        if not self.limits.budget.take(chunk, self.size):
            raise self.busy()
        self.size += chunk
        if not message.get("more_body", False):
            self.complete = True
            if self.guard is not None:
                self.guard.time_body(None)

    def too_large(self) -> BodyRefused:
        return BodyRefused(413, f"request body is larger than the limit of {self.limits.max_body} bytes")

    def busy(self) -> BodyRefused:
        self.limits.lifecycle.dropped["over_budget"] += 1
        return BodyRefused(503, BUSY)

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.release()  # the body is let go once its answer begins
            headers = message.get("headers", [])
            if self.limits.lifecycle.draining and CLOSE not in headers:
                message = {**message, "headers": [*headers, CLOSE]}
        elif message["type"] == "http.response.body" and len(message.get("body", b"")) > PIECE:
            await self.send_in_pieces(message["body"], message.get("more_body", False))
            return
        await self.inner_send(message)

    async def send_in_pieces(self, body: bytes, more_body: bool) -> None:
        budget = self.limits.budget
        budget.add(len(body))
        try:
            for start in range(0, len(body), PIECE):
                end = start + PIECE
                await self.inner_send({"type": "http.response.body", "body": body[start:end], "more_body": more_body or end < len(body)})
        finally:
            budget.release(len(body))

    def release(self) -> None:
        """Lets the body go (once its answer begins, or the request is over)."""
        if self.size:
            self.limits.budget.release(self.size)
            self.size = 0
