"""One webhook as a plain ASGI endpoint: read the body within the limits, decide, answer, count.

The webhook path is the server's hot path, so it bypasses FastAPI's request handling (dependency
solving, typed-body parsing, response classes): the body is read straight off ``receive`` and the
decision's bytes go straight to ``send``. docs/PERFORMANCE.md has the measured difference.

A request holds its bytes in the server's budget (``webhook.server.budget``) from the first byte of
its body to the last byte of its answer handed to the connection; a body the budget cannot take is
answered 503. The body and the decision are let go before the answer is written, so that a client
slow to take its answer holds the answer's bytes only. An answer larger than a connection's write
buffer is handed over in pieces: a client that does not read it then pauses the connection, whose
write timeout drops it (``webhook.server.connection.protocol``), rather than all of it waiting unseen in the
transport.
"""

from __future__ import annotations

import asyncio
import logging
import time

from starlette.types import Receive, Scope, Send

from webhook.webhooks import Answer
from webhook.core.admission import Rejection
from webhook.server import decisions
from webhook.server.budget import BUSY, RETRY_AFTER, SMALL, Budget
from webhook.server.connection.limits import WRITE_HIGH_WATER
from webhook.server.lifecycle import Lifecycle
from webhook.server.metrics import ServerMetrics
from webhook.webhooks import Respond

log = logging.getLogger(__name__)

JSON_HEADERS = [(b"content-type", b"application/json")]
CLOSE = (b"connection", b"close")
REFUSAL_HEADERS = {408: [CLOSE], 413: [CLOSE], 503: [CLOSE, (b"retry-after", RETRY_AFTER)]}
"""A refused body may still be on its way: the connection cannot carry another request."""

LENGTH_DIGITS = 18
"""A Content-Length of more digits is over any limit (10**18 bytes is an exabyte)."""

PIECE = WRITE_HIGH_WATER
"""Bytes of an answer handed to the connection at a time."""


class BodyRefused(Exception):
    def __init__(self, rejection: Rejection) -> None:
        super().__init__(rejection.message)
        self.rejection = rejection


class ClientGone(Exception):
    pass


class WebhookEndpoint:
    def __init__(
        self,
        name: str,
        respond: Respond,
        metrics: ServerMetrics,
        max_body_bytes: int,
        body_timeout: float = 30.0,
        *,
        budget: Budget,
        lifecycle: Lifecycle,
    ) -> None:
        self.name = name
        self.respond = respond
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.budget = budget
        self.lifecycle = lifecycle
        self.in_flight = metrics.in_flight
        self.in_flight[name] = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        self.in_flight[self.name] += 1
        held = 0
        try:
            try:
                body = await self.read_in_time(scope, receive)
            except BodyRefused as refused:
                status, headers, content = self.answer(Answer.rejected(refused.rejection), started)
            else:
                held = len(body)
                status, headers, content = self.answer(await self.respond(body), started)
                del body
            await send({"type": "http.response.start", "status": status, "headers": headers})
            if len(content) <= PIECE:
                # Handed over at once, unless the connection is paused by an answer before this one,
                # whose write timeout is running already.
                await send({"type": "http.response.body", "body": content})
            else:
                # The body is let go: from here on the answer is what the request holds.
                self.budget.add(len(content) - held)
                held = len(content)
                await send_in_pieces(send, content)
        except ClientGone:
            pass
        except asyncio.CancelledError:
            if not self.lifecycle.closed:
                raise
            # Cut off at the drain's end, which aborted the connection and says so in its warning.
        finally:
            if held:
                self.budget.release(held)
            self.in_flight[self.name] -= 1

    def answer(self, decision: Answer, started: float) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The answer's status, headers and bytes, counted and logged."""
        if decision.error is not None:
            self.log_error(decision)
        elif decision.status == 503:
            self.lifecycle.dropped["over_budget"] += 1
        seconds = time.perf_counter() - started
        self.metrics.observe(self.name, decision, seconds)
        # The decision's log line is built only when it is written (DEBUG for requests allowed unchanged).
        level = logging.DEBUG if decision.outcome in decisions.QUIET else logging.INFO
        if decisions.log.isEnabledFor(level):
            decisions.log_decision(level, self.name, decision, seconds)
        content = decision.content()
        headers = JSON_HEADERS + [(b"content-length", str(len(content)).encode())]
        refusal = REFUSAL_HEADERS.get(decision.status)
        return decision.status, headers if refusal is None else headers + refusal, content

    def log_error(self, decision: Answer) -> None:
        uid = decision.uid
        log.error(
            "internal error in webhook %s (request uid %r)",
            self.name,
            uid,
            exc_info=decision.error,
            extra={"uid": uid, "webhook": self.name},
        )

    async def read_in_time(self, scope: Scope, receive: Receive) -> bytes:
        """``read_body`` within the body timeout. uvicorn has no timeout for a body, so a client
        that stops sending would hold its request, and its connection, open for ever. A timer handle
        cancels the read: on every request it costs less than ``asyncio.timeout`` would."""
        task = asyncio.current_task()
        assert task is not None
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            task.cancel()

        timer = asyncio.get_running_loop().call_later(self.body_timeout, expire)
        try:
            return await read_body(scope, receive, self.max_body_bytes, self.budget)
        except asyncio.CancelledError:
            if not expired:
                raise
            task.uncancel()
            raise BodyRefused(Rejection(408, f"request body not received in full within {self.body_timeout:g} s")) from None
        finally:
            timer.cancel()


async def send_in_pieces(send: Send, content: bytes) -> None:
    view = memoryview(content)
    for start in range(0, len(content), PIECE):
        end = start + PIECE
        await send({"type": "http.response.body", "body": view[start:end], "more_body": end < len(content)})


def _too_large(limit: int) -> BodyRefused:
    return BodyRefused(Rejection(413, f"request body is larger than the limit of {limit} bytes"))


def check_length(headers: list[tuple[bytes, bytes]], limit: int, budget: Budget) -> None:
    """Refuses a body whose Content-Length is over ``limit``, or a large one the budget cannot take
    now, before any of it is read."""
    for name, value in headers:
        if name == b"content-length":
            if not value.isdigit():
                return
            # Measured before ``int`` reads it: ``int`` refuses text of more than 4300 digits.
            digits = value.lstrip(b"0")
            if len(digits) > LENGTH_DIGITS:
                raise _too_large(limit)
            length = int(digits or b"0")
            if length > limit:
                raise _too_large(limit)
            # A small body is taken as it comes, at no cost to an ordinary request.
            if length > SMALL and not budget.fits(length):
                raise BodyRefused(Rejection(503, BUSY))
            return


def take_chunk(size: int, chunk: int, limit: int, budget: Budget) -> None:
    """Takes ``chunk`` more bytes of a body that has ``size`` in the budget, or refuses the body:
    over ``limit``, or past what the budget can hold now (nothing taken then)."""
    if size + chunk > limit:
        raise _too_large(limit)
    if not budget.take(chunk, size):
        raise BodyRefused(Rejection(503, BUSY))


async def read_body(scope: Scope, receive: Receive, limit: int, budget: Budget) -> bytes:
    """The whole body, held in ``budget`` as it arrives (the caller releases it), refused as soon as
    it is known to be over ``limit`` or past the budget: from Content-Length before reading
    anything, else as it streams in."""
    check_length(scope["headers"], limit, budget)
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone
            chunk = message.get("body", b"")
            take_chunk(size, len(chunk), limit, budget)
            size += len(chunk)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
    except BaseException:
        budget.release(size)
        raise
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
