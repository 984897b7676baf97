"""One webhook as a plain ASGI endpoint: read the body within the limits, decide, answer, count.

The webhook path is the server's hot path, so it bypasses FastAPI's request handling (dependency
solving, typed-body parsing, response classes): the body is read straight off ``receive`` and the
decision's bytes go straight to ``send``. docs/PERFORMANCE.md has the measured difference.

A request holds its bytes in the server's budget (``webhook.server.budget``) from the first byte of
its body to the last byte of its answer handed to the connection; a body the budget cannot take is
answered 503. The body and the decision are let go before the answer is written, so that a client
slow to take its answer holds the answer's bytes only. An answer larger than a connection's write
buffer is handed over in pieces: a client that does not read it then pauses the connection, whose
write timeout drops it (``webhook.server.connections``), rather than all of it waiting unseen in the
transport.
"""

from __future__ import annotations

import asyncio
import logging
import time

from starlette.types import Receive, Scope, Send

from webhook.core.admission.handling import Answer
from webhook.core.admission.request import Rejection
from webhook.server import decisions
from webhook.server.budget import BUSY, RETRY_AFTER, Budget
from webhook.server.lifecycle import Lifecycle
from webhook.server.limits import WRITE_HIGH_WATER
from webhook.server.metrics import ServerMetrics
from webhook.webhooks import Respond

log = logging.getLogger(__name__)

JSON_HEADERS = [(b"content-type", b"application/json")]
CLOSE = (b"connection", b"close")
REFUSAL_HEADERS = {408: [CLOSE], 413: [CLOSE], 503: [CLOSE, (b"retry-after", RETRY_AFTER)]}
"""A refused body may still be on its way: the connection cannot carry another request."""

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
        self.in_flight[self.name] += 1
        try:
            reply = await self.decide(scope, receive)
            if reply is not None:
                await self.write(send, *reply)
        except asyncio.CancelledError:
            if not self.lifecycle.closed:
                raise
            # Cut off at the drain's end, which aborted the connection and says so in its warning.
        finally:
            self.in_flight[self.name] -= 1

    async def decide(self, scope: Scope, receive: Receive) -> tuple[int, bytes] | None:
        """The answer's status and bytes, counted and logged, and held in the budget; None when the
        client has gone before its body was read."""
        started = time.perf_counter()
        try:
            body = await self.read_in_time(scope, receive)
        except BodyRefused as refused:
            decision = Answer.rejected(refused.rejection)
            if decision.status == 503:
                self.lifecycle.dropped["over_budget"] += 1
        except ClientGone:
            return None
        else:
            try:
                decision = await self.respond(body)
            finally:
                self.budget.release(len(body))
            if decision.error is not None:
                self.log_error(decision)
        seconds = time.perf_counter() - started
        self.metrics.observe(self.name, decision, seconds)
        # The decision's log line is built only when it is written (DEBUG for most requests).
        level = logging.DEBUG if decision.outcome in decisions.QUIET else logging.INFO
        if decisions.log.isEnabledFor(level):
            decisions.log_decision(level, self.name, decision, seconds)
        content = decision.content()
        self.budget.add(len(content))
        return decision.status, content

    async def write(self, send: Send, status: int, content: bytes) -> None:
        """Sends the answer, whose bytes the budget holds until it is handed over."""
        headers = JSON_HEADERS + [(b"content-length", str(len(content)).encode())]
        refusal = REFUSAL_HEADERS.get(status)
        if refusal is not None:
            headers += refusal
        try:
            await send({"type": "http.response.start", "status": status, "headers": headers})
            if len(content) <= PIECE:
                await send({"type": "http.response.body", "body": content})
                return
            view = memoryview(content)
            for start in range(0, len(content), PIECE):
                end = start + PIECE
                await send({"type": "http.response.body", "body": view[start:end], "more_body": end < len(content)})
        finally:
            self.budget.release(len(content))

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
        that cancels the read costs this path about 5 µs, ``asyncio.timeout`` about 11 µs."""
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


def _too_large(limit: int) -> BodyRefused:
    return BodyRefused(Rejection(413, f"request body is larger than the limit of {limit} bytes"))


def check_length(scope: Scope, limit: int, budget: Budget) -> None:
    """Refuses a body whose Content-Length is over ``limit``, or more than the budget can take now,
    before any of it is read."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            if not value.isdigit():
                return
            # Measured before ``int`` reads it: ``int`` refuses text of more than 4300 digits.
            digits = value.lstrip(b"0")
            if len(digits) > len(str(limit)) or int(digits or b"0") > limit:
                raise _too_large(limit)
            if not budget.fits(int(digits or b"0")):
                raise BodyRefused(Rejection(503, BUSY))
            return


async def read_body(scope: Scope, receive: Receive, limit: int, budget: Budget) -> bytes:
    """The whole body, held in ``budget`` as it arrives (the caller releases it), refused as soon as
    it is known to be over ``limit`` or past the budget: from Content-Length before reading
    anything, else as it streams in."""
    check_length(scope, limit, budget)
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone
            chunk = message.get("body", b"")
            if size + len(chunk) > limit:
                raise _too_large(limit)
            if not budget.take(len(chunk), size):
                raise BodyRefused(Rejection(503, BUSY))
            size += len(chunk)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
    except BaseException:
        budget.release(size)
        raise
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
