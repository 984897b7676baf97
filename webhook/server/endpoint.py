"""One webhook as a plain ASGI endpoint: read the body, decide, count, log, answer.

The body is read straight off ``receive`` under the request limits (``webhook.server.limits``,
whose refusals are answered here like any other answer, so that they are counted and logged), the
decision is the core's (``webhook.webhooks.Respond``), and its bytes go straight to ``send``: no
typed-body parsing or response classes on the server's hot path. The body and the decision are let
go before the answer is written.
"""

from __future__ import annotations

import logging
import time

from starlette.types import Receive, Scope, Send

from webhook.server import decisions
from webhook.server.limits import JSON, BodyRefused
from webhook.server.metrics import ServerMetrics
from webhook.webhooks import Answer, Respond

log = logging.getLogger(__name__)


class ClientGone(Exception):
    pass


class WebhookEndpoint:
    def __init__(self, name: str, respond: Respond, metrics: ServerMetrics) -> None:
        self.name = name
        self.respond = respond
        self.metrics = metrics
        self.in_flight = metrics.in_flight
        self.in_flight[name] = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        self.in_flight[self.name] += 1
        try:
            status, headers, content = await self.answer(receive, started)
        except ClientGone:
            return
        finally:
            self.in_flight[self.name] -= 1
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    async def answer(self, receive: Receive, started: float) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The answer's status, headers and bytes, counted and logged."""
        try:
            body = await read_body(receive)
        except BodyRefused as refused:
            decision, extra = Answer(refused.status, {"error": refused.message}), refused.headers
        else:
            decision, extra = await self.respond(body), []
            del body
        self.record(decision, time.perf_counter() - started)
        content = decision.content()
        return decision.status, [JSON, (b"content-length", str(len(content)).encode()), *extra], content

    def record(self, decision: Answer, seconds: float) -> None:
        if decision.error is not None:
            log.error(
                "internal error in webhook %s (request uid %r)",
                self.name,
                decision.uid,
                exc_info=decision.error,
                extra={"uid": decision.uid, "webhook": self.name},
            )
        self.metrics.observe(self.name, decision, seconds)
        # The decision's log line is built only when it is written (DEBUG for requests allowed unchanged).
        level = logging.DEBUG if decision.outcome in decisions.QUIET else logging.INFO
        if decisions.log.isEnabledFor(level):
            decisions.log_decision(level, self.name, decision, seconds)


async def read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
