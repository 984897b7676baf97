"""The server's limits that uvicorn's options cannot set with httptools (DECISIONS.md §2.3 has why
each is kept so, operations.md, Limits, what a client sees past it): on each connection, a guard
around uvicorn's protocol; on each request, an ASGI middleware; and the budget of bytes held for
clients that both count in. A body refused is raised from ``receive`` as ``BodyRefused``, for the
endpoint to answer, count and log as any answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from webhook.settings import ServeSettings

SMALL = 256 * 1024
"""A holder of at most this many bytes may fill the whole budget, a larger one three quarters, so
that slow clients of large requests cannot lock ordinary reviews out."""

BUSY = "the server holds as many request and answer bytes as it may at once; retry shortly"
"""What a client the budget refuses is told (HTTP 503)."""

RETRY_AFTER = b"1"
"""Seconds a refused client waits: bytes are held for seconds, or until a slow client times out."""

DROP_REASONS = (
    "header_timeout", "header_too_large", "over_budget", "write_timeout", "drained_idle", "drain_timeout", "max_connections",
)
"""The ``reason`` label of ``webhook_connections_dropped_total``: its help says what each means."""

WRITE_HIGH_WATER = 64 * 1024
"""Bytes of answers waiting in a connection's transport above which its writer is paused (and the
write timeout runs): uvloop's default would let a client that does not read leave far more unseen."""

Peer = tuple[str, int]


@dataclass(slots=True)
class Budget:
    """The bytes held for all clients of a server (``--max-held-bytes``), so that a replica's memory
    is bounded whatever its clients send and however slowly they read."""

    limit: int
    held: int = 0
    large: int = field(init=False)

    def __post_init__(self) -> None:
        self.large = self.limit - self.limit // 4

    def fits(self, amount: int) -> bool:
        """Whether a new holder of ``amount`` bytes (a body of known length) would fit now."""
        return self.held + amount <= (self.limit if amount <= SMALL else self.large)

    def take(self, amount: int, holding: int) -> bool:
        """Adds ``amount`` bytes for a holder of ``holding``; False, and nothing taken, past what a
        holder of its size may fill."""
        held = self.held + amount
        if held > (self.limit if holding + amount <= SMALL else self.large):
            return False
        self.held = held
        return True

    def release(self, amount: int) -> None:
        self.held -= amount


@dataclass(slots=True)
class Lifecycle:
    """Shared by readiness, the request limits and the signal handler (operations.md, Shutdown)."""

    draining: bool = False
    """SIGTERM was received: readiness fails and every response closes its connection."""
    closed: bool = False
    """The listener is closing: uvicorn drains the connections, and cancels what is left at the end."""
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DROP_REASONS, 0))
    """Connections the server dropped, by reason (counted on the event loop)."""
    accept_error: str | None = None
    """Why connections cannot be accepted now (a full descriptor table, say): readiness fails meanwhile."""


def passed(due: float | None, now: float) -> bool:
    return due is not None and due <= now


class Connections:
    """One server's open connections, by peer, and the limits their guards keep."""

    def __init__(self, settings: ServeSettings, budget: Budget, dropped: dict[str, int]) -> None:
        self.settings = settings
        self.budget = budget
        self.dropped = dropped
        self.open: dict[Peer, ConnectionGuard] = {}
        self.count = 0
        """Every connection accepted and not yet closed: waiting for TLS, in its handshake, or guarded."""
        self.closed = 0
        """Connections closed since the server started (``webhook.server.memory`` trims after many)."""

    def ended(self) -> None:
        """One of ``count`` has closed."""
        self.count -= 1
        self.closed += 1

    def protocol(self) -> type[asyncio.Protocol]:
        """What ``uvicorn.Config(http=...)`` takes: a guard of these connections for each one."""
        connections = self

        class Guard(ConnectionGuard):
            def __init__(self, **uvicorn_arguments: Any) -> None:
                super().__init__(connections, **uvicorn_arguments)

        return Guard

    def guard(self, **uvicorn_arguments: Any) -> ConnectionGuard:
        """A guard of one of these connections, around uvicorn's protocol made with these arguments."""
        return ConnectionGuard(self, **uvicorn_arguments)

    def idle(self) -> int:
        """Connections uvicorn knows with no request under way (its shutdown closes them at once)."""
        return sum(guard.started and not guard.in_request for guard in self.open.values())

    def drop_all(self, reason: str) -> None:
        for guard in list(self.open.values()):
            guard.drop(reason)


class ConnectionGuard(asyncio.Protocol):
    """One connection's limits, around uvicorn's protocol; it never parses or writes HTTP. uvicorn
    meets the connection at its first byte, so that its shutdown leaves one about to send alone."""

    def __init__(self, connections: Connections, **uvicorn_arguments: Any) -> None:
        self.connections, self.limits = connections, connections.settings
        self.inner: asyncio.Protocol = HttpToolsProtocol(**uvicorn_arguments)
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport
        self.peer: Peer | None = None
        self.started = self.ended = self.in_request = self.paused = False
        self.made = False
        """Told of its connection (after the TLS handshake): counted among ``Connections.count`` till it ends."""
        self.received = self.delivered = self.held = 0
        """Bytes received and body bytes delivered since the request began; held: the difference."""
        self.head_due: float | None = None
        self.body_due: float | None = None
        self.write_due: float | None = None
        self.late_body: Callable[[], None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at = 0.0

    # --- asyncio's protocol, passed on to uvicorn's --------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.made = True
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
        """Calls ``late`` unless the whole body arrives within ``--body-timeout``; None: it has."""
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
        """Counts ``more`` bytes received; False when the connection is dropped for them. One read
        may take it past ``--max-header-bytes``: it may bring a head and the start of its body."""
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
        """A deadline ``seconds`` from now, the connection's timer set to fire by then. Requests set
        and clear deadlines that rarely pass: times the one timer reads, not timers."""
        due = self.loop.time() + seconds
        if (self.timer is None or self.timer_at > due) and not self.ended:
            if self.timer is not None:
                self.timer.cancel()
            self.timer, self.timer_at = self.loop.call_at(due, self.tick), due
        return due

    def tick(self) -> None:
        """Acts on a deadline that has passed, and sets the timer for the next."""
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
        if self.made:
            self.connections.ended()
        if self.timer is not None:
            self.timer.cancel()
        self.release(0)
        if self.peer is not None and self.connections.open.get(self.peer) is self:
            del self.connections.open[self.peer]
        if self.started:
            self.inner.connection_lost(exc)


CLOSE = (b"connection", b"close")
JSON = (b"content-type", b"application/json")
PIECE = WRITE_HIGH_WATER
"""Bytes of a large answer handed to the connection at a time, each once the one before is taken."""

LENGTH_DIGITS = 18
"""A Content-Length of more digits is over any limit (10**18 bytes is an exabyte)."""


class BodyRefused(Exception):
    """A body over a limit: the status and the sentence its client is answered with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = [CLOSE, (b"retry-after", RETRY_AFTER)] if status == 503 else [CLOSE]


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
        """Every scope is HTTP: the server runs without lifespan or WebSockets (``uvicorn_config``)."""
        guard = self.guards.get(scope.get("client"))  # type: ignore[arg-type]  # a peer, or None in-process
        if guard is not None:
            guard.request_started()
        request = LimitedRequest(self, receive, send, guard)
        try:
            refusal = request.read_head(scope)
            if refusal is None:
                await self.app(scope, request.receive, request.send)
            else:
                await self.refuse(request, *refusal)
        except asyncio.CancelledError:
            if not self.lifecycle.closed:
                raise
            if guard is not None:
                guard.drop("drain_timeout")  # cut off at the drain's end: uvicorn's line says so
        finally:
            request.release()
            if guard is not None:
                guard.request_ended()

    async def refuse(self, request: LimitedRequest, status: int, refusal: str) -> None:
        if status == 431:
            self.lifecycle.dropped["header_too_large"] += 1
        content = orjson.dumps({"error": refusal})
        headers = [JSON, (b"content-length", str(len(content)).encode()), CLOSE]
        await request.send({"type": "http.response.start", "status": status, "headers": headers})
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
        self.begun = False
        """The application has begun to read the body, and its timeout runs."""
        self.task: asyncio.Task[object] | None = None
        self.reading = False
        self.late = False
        self.size = 0
        """Bytes of the body held in the budget."""
        self.complete = False

    def read_head(self, scope: Scope) -> tuple[int, str] | None:
        """Why the head is refused (431 past a limit, 501 for a transfer coding Go's server does not
        take), or None; its Content-Length noted on the way."""
        too_large = self.over_limits(scope)
        if too_large is not None:
            return 431, too_large
        codings = [value for name, value in scope["headers"] if name == b"transfer-encoding"]
        if codings and (len(codings) > 1 or codings[0].strip().lower() != b"chunked"):
            return 501, f'unsupported transfer encoding "{b", ".join(codings).decode("latin-1")}": only chunked is taken'
        return None

    def over_limits(self, scope: Scope) -> str | None:
        """Which limit of size the head is over, or None."""
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
        """The first read of the body: refused from its Content-Length, or timed by the guard's
        clock (in-process, without a connection, untimed)."""
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
        """Refuses, before any of it is read, a body whose Content-Length is over the limit or that
        the budget cannot take now."""
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
        budget.held += len(body)  # made already: counted, never refused
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
