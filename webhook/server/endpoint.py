"""One webhook as a plain ASGI endpoint: read the body within the limit, decide, answer, count.

The webhook path is the server's hot path, so it bypasses FastAPI's request handling (dependency
solving, typed-body parsing, response classes): the body is read straight off ``receive`` and the
decision's bytes go straight to ``send``. docs/PERFORMANCE.md has the measured difference.
"""

from __future__ import annotations

import asyncio
import logging
import time

from starlette.types import Receive, Scope, Send

from webhook.core.admission.handling import Answer
from webhook.core.admission.request import Rejection
from webhook.server import decisions
from webhook.server.metrics import ServerMetrics
from webhook.webhooks import Respond

log = logging.getLogger(__name__)

JSON_HEADERS = [(b"content-type", b"application/json")]


class BodyTooLarge(Exception):
    pass


class BodyTooSlow(Exception):
    pass


class ClientGone(Exception):
    pass


class WebhookEndpoint:
    def __init__(
        self, name: str, respond: Respond, metrics: ServerMetrics, max_body_bytes: int, body_timeout: float = 30.0
    ) -> None:
        self.name = name
        self.respond = respond
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.in_flight = metrics.in_flight
        self.in_flight[name] = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        self.in_flight[self.name] += 1
        try:
            try:
                body = await self.read_in_time(scope, receive)
            except BodyTooLarge:
                decision = Answer.rejected(Rejection(413, f"request body is larger than the limit of {self.max_body_bytes} bytes"))
            except BodyTooSlow:
                decision = Answer.rejected(Rejection(408, f"request body not received in full within {self.body_timeout:g} s"))
            except ClientGone:
                return
            else:
                decision = await self.respond(body)
                if decision.error is not None:
                    self.log_error(decision)
            seconds = time.perf_counter() - started
            self.metrics.observe(self.name, decision, seconds)
            # The decision's log line is built only when it is written (DEBUG for most requests).
            level = logging.DEBUG if decision.outcome in decisions.QUIET else logging.INFO
            if decisions.log.isEnabledFor(level):
                decisions.log_decision(level, self.name, decision, seconds)
            content = decision.content()
            headers = JSON_HEADERS + [(b"content-length", str(len(content)).encode())]
            if decision.status in (408, 413):
                # The rest of the body may still be on its way: the connection cannot carry another request.
                headers.append((b"connection", b"close"))
            await send({"type": "http.response.start", "status": decision.status, "headers": headers})
            await send({"type": "http.response.body", "body": content})
        finally:
            self.in_flight[self.name] -= 1

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
            return await read_body(scope, receive, self.max_body_bytes)
        except asyncio.CancelledError:
            if not expired:
                raise
            task.uncancel()
            raise BodyTooSlow from None
        finally:
            timer.cancel()


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The whole body, refused as soon as it is known to be over ``limit``: from Content-Length
    before reading anything, else by counting as it streams in."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            # Measured before ``int`` reads it: ``int`` refuses text of more than 4300 digits.
            digits = value.lstrip(b"0")
            if value.isdigit() and (len(digits) > len(str(limit)) or int(digits or b"0") > limit):
                raise BodyTooLarge
            break
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
