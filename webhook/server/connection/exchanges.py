"""Webhook requests answered by the connection itself: a POST to a webhook's path is read, decided
and answered from the protocol's callbacks, with no ASGI cycle.

uvicorn serves a request by building an ASGI scope, an event, message dicts and a task to run the
app in, and writes what the app sends after checking every header of it. The webhooks answer every
request with one JSON document, and that machinery cost more than deciding a typical review
(docs/PERFORMANCE.md). So a POST to a webhook's path becomes an ``Exchange``: its body is gathered
as the parser hands it over, under the endpoint's limits (``webhook.server.endpoint``: a
Content-Length over ``--max-body-bytes`` refused before anything is read, the budget taken chunk by
chunk, ``--body-timeout``); once complete it is decided by the endpoint at the end of the loop's turn
(``turns``), counted and logged by it as any request, and answered in one write.

The exchange sits where uvicorn keeps its request cycle (``cycle``, and ``pipeline`` behind a
request under way) and answers to the names the protocol reads there (``body``, ``more_body``,
``keep_alive``, ``response_complete``), so keep-alive, pipelining, the drain, the write timeout and
the head limits treat both alike. Every other request (probes, ``/metrics``, another method, a
percent-encoded path) goes to the app as before, and so does a webhook called in-process through
the ASGI app (``webhook.server.app``): both end in the same ``WebhookEndpoint``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Mapping
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from webhook.webhooks import Answer
from webhook.core.admission import Rejection
from webhook.server.connection.eager import run_eagerly
from webhook.server.connection.heads import HeadLimits
from webhook.server.connection.turns import LoopTurn
from webhook.server.endpoint import PIECE, REFUSAL_HEADERS, BodyRefused, WebhookEndpoint, check_length, take_chunk

log = logging.getLogger(__name__)

CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class _Unwatched:
    """uvicorn's callbacks set a cycle's ``message_event`` when a body arrives: nothing waits on an
    exchange's, the protocol acts on it."""

    @staticmethod
    def set() -> None:
        return None


class Exchange:
    """One webhook request on its connection, from its complete head to its answer."""

    __slots__ = (
        "endpoint", "started", "keep_alive", "target", "http_version", "body", "held", "more_body",
        "response_complete", "disconnected", "begun", "deciding", "refused", "timer", "continue_expected",
    )
    message_event = _Unwatched

    def __init__(self, endpoint: WebhookEndpoint, keep_alive: bool, target: bytes, http_version: str) -> None:
        self.endpoint = endpoint
        self.started = time.perf_counter()
        self.keep_alive = keep_alive
        self.target = target
        self.http_version = http_version
        self.body = bytearray()
        self.held = 0
        """Bytes held in the server's budget: the body's, then the answer's while it is written."""
        self.more_body = True
        """The body is still arriving."""
        self.response_complete = False
        """Answered in full, or ended without an answer (refused, the client gone): nothing more to do."""
        self.disconnected = False
        self.begun = False
        """The requests before it on the connection are answered: this one is read and answered now."""
        self.deciding = False
        """Its body is complete and the endpoint is deciding it."""
        self.refused: Rejection | None = None
        self.timer: asyncio.TimerHandle | None = None
        """The body timeout, while the body of the exchange begun is incomplete."""
        self.continue_expected = False


def _stop_timer(exchange: Exchange) -> None:
    if exchange.timer is not None:
        exchange.timer.cancel()
        exchange.timer = None


class WebhookExchanges(HeadLimits):
    def __init__(self, *args: Any, turn: LoopTurn, webhooks: Mapping[bytes, WebhookEndpoint], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.turn = turn
        """The server's: the requests of a turn of the loop are decided at its end."""
        self.webhooks = webhooks
        """The webhooks' endpoints by path."""

    # --- the head: an exchange, or uvicorn's cycle -------------------------------------------------

    def _start_request(self) -> None:
        parser = self.parser
        endpoint = self.webhooks.get(httptools.parse_url(self.url).path) if parser.get_method() == b"POST" else None
        if endpoint is None or parser.should_upgrade():
            HttpToolsProtocol.on_headers_complete(self)
            return
        version = parser.get_http_version()
        exchange = Exchange(endpoint, version != "1.0" and parser.should_keep_alive(), self.url, version)
        exchange.continue_expected = self.expect_100_continue
        endpoint.in_flight[endpoint.name] += 1
        try:
            check_length(self.headers, endpoint.max_body_bytes, self.budget)
        except BodyRefused as refused:
            exchange.refused = refused.rejection
        existing = self.cycle
        self.cycle = exchange  # type: ignore[assignment]
        if existing is None or existing.response_complete:
            self._begin(exchange)
        else:
            # Behind a request under way (pipelined): begun when that one is answered.
            self.flow.pause_reading()
            self.pipeline.appendleft((exchange, self.app))  # type: ignore[arg-type]

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        """A pipelined request, once the one before it is answered: an incomplete body's timeout starts."""
        if not isinstance(cycle, Exchange):
            HttpToolsProtocol._start_asgi_task(self, cycle, app)
            return
        self._begin(cycle)
        if cycle.more_body and not cycle.response_complete:
            self._arm_body_timer(cycle)

    def _begin(self, exchange: Exchange) -> None:
        exchange.begun = True
        if exchange.refused is not None:
            self._answer(exchange, Answer.rejected(exchange.refused))
        elif not exchange.more_body:
            self._decide(exchange)
        elif exchange.continue_expected and not self.transport.is_closing():
            self.transport.write(CONTINUE)

    # --- the body ----------------------------------------------------------------------------------

    def on_body(self, body: bytes) -> None:
        exchange = self.cycle
        if not isinstance(exchange, Exchange):
            HttpToolsProtocol.on_body(self, body)
            return
        if exchange.response_complete or exchange.refused is not None:
            return
        try:
            take_chunk(exchange.held, len(body), exchange.endpoint.max_body_bytes, self.budget)
        except BodyRefused as refused:
            self._refuse_body(exchange, refused.rejection)
            return
        exchange.held += len(body)
        exchange.body += body

    def on_message_complete(self) -> None:
        HeadLimits.on_message_complete(self)
        exchange = self.cycle
        if isinstance(exchange, Exchange) and exchange.begun and exchange.refused is None and not exchange.response_complete:
            self._decide(exchange)

    def data_received(self, data: bytes) -> None:
        HeadLimits.data_received(self, data)
        exchange = self.cycle
        # An exchange begun at its head whose body is not complete once the data read is parsed:
        # from now on its client has --body-timeout to send the rest.
        if self.in_body and isinstance(exchange, Exchange) and exchange.begun and exchange.timer is None and not exchange.response_complete:
            self._arm_body_timer(exchange)

    def _arm_body_timer(self, exchange: Exchange) -> None:
        timeout = exchange.endpoint.body_timeout
        rejection = Rejection(408, f"request body not received in full within {timeout:g} s")
        exchange.timer = self.loop.call_later(timeout, self._refuse_body, exchange, rejection)

    def _refuse_body(self, exchange: Exchange, rejection: Rejection) -> None:
        """The body is over a limit or late: let go, and answered with ``rejection`` once the
        exchange is begun (at once if it is)."""
        _stop_timer(exchange)
        self.budget.release(exchange.held)
        exchange.held = 0
        exchange.body = bytearray()
        exchange.refused = rejection
        if exchange.begun:
            self._answer(exchange, Answer.rejected(rejection))

    # --- the decision and the answer ---------------------------------------------------------------

    def _decide(self, exchange: Exchange) -> None:
        """Decided at the end of the loop's turn, after the other requests read in it (``turns``)."""
        _stop_timer(exchange)
        exchange.deciding = True
        self.turn.decide(self._decide_now, exchange)

    def _decide_now(self, exchange: Exchange) -> None:
        """Answered before this returns, unless the decision waits (an authorization check, a
        PodCliqueSet fetched): then it goes on in a task from where it waited."""
        task = run_eagerly(self._respond(exchange))
        if task is not None:
            self._keep(task)

    def _keep(self, task: asyncio.Task[None]) -> None:
        """Counts ``task`` among the server's, which the drain waits for."""
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)

    async def _respond(self, exchange: Exchange) -> None:
        """The endpoint's decision (which answers a handler's error itself, code 500), answered."""
        body = bytes(exchange.body)
        exchange.body = bytearray()
        try:
            decision = await exchange.endpoint.respond(body)
            del body
            self._answer(exchange, decision)
        except Exception:  # noqa: BLE001 - a bug of ours: logged, and the client cut off rather than left waiting
            log.exception("internal error answering a request of webhook %s", exchange.endpoint.name)
            self._end(exchange)
            self.transport.abort()
        except BaseException as stopped:
            self._end(exchange)
            if isinstance(stopped, asyncio.CancelledError) and self.lifecycle.closed:
                # Cut off at the drain's end, which aborted the connection and says so in its warning.
                return
            raise

    def _answer(self, exchange: Exchange, decision: Answer) -> None:
        """Counts and logs the decision, and writes its answer unless the client has gone."""
        status, headers, content = exchange.endpoint.answer(decision, exchange.started)
        if exchange.response_complete or self.transport.is_closing():
            self._end(exchange)
            return
        keep_alive = exchange.keep_alive and status not in REFUSAL_HEADERS
        head = self._head(status, headers, keep_alive)
        if self.access_log:
            client = "%s:%d" % self.client if self.client else ""
            self.access_logger.info('%s - "POST %s HTTP/%s" %d', client, exchange.target.decode("latin-1"), exchange.http_version, status)
        if len(content) <= PIECE:
            self.transport.write_answer(head + content)  # type: ignore[attr-defined]  # ServerProtocol's CoalescedWrites
            self._complete(exchange, keep_alive)
        else:
            # The body is let go: from here on the answer is what the request holds.
            self.budget.add(len(content) - exchange.held)
            exchange.held = len(content)
            self._keep(self.loop.create_task(self._write_in_pieces(exchange, head, content, keep_alive)))

    def _head(self, status: int, headers: list[tuple[bytes, bytes]], keep_alive: bool) -> bytes:
        lines = [STATUS_LINE[status]]
        for name, value in (*self.server_state.default_headers, *headers):
            lines += (name, b": ", value, b"\r\n")
        if not keep_alive and status not in REFUSAL_HEADERS:
            lines.append(b"connection: close\r\n")
        lines.append(b"\r\n")
        return b"".join(lines)

    async def _write_in_pieces(self, exchange: Exchange, head: bytes, content: bytes, keep_alive: bool) -> None:
        """An answer larger than the connection's write buffer: a client that does not take it
        pauses the connection, whose write timeout drops it, rather than all of it waiting unseen
        in the transport."""
        try:
            self.transport.write(head)
            view = memoryview(content)
            for start in range(0, len(content), PIECE):
                if self.flow.write_paused:
                    await self.flow.drain()
                if self.transport.is_closing():
                    return
                self.transport.write(view[start : start + PIECE])
            self._complete(exchange, keep_alive)
        finally:
            self._end(exchange)

    def _complete(self, exchange: Exchange, keep_alive: bool) -> None:
        """The answer is handed to the connection: the next request may begin."""
        self._end(exchange)
        if not keep_alive:
            self.transport.close()
        self.on_response_complete()

    def _end(self, exchange: Exchange) -> None:
        """Lets go of what the exchange holds, once."""
        if exchange.response_complete:
            return
        exchange.response_complete = True
        _stop_timer(exchange)
        if exchange.held:
            self.budget.release(exchange.held)
            exchange.held = 0
        exchange.endpoint.in_flight[exchange.endpoint.name] -= 1

    def connection_lost(self, exc: Exception | None) -> None:
        """Exchanges waiting for their bodies or behind another request end here; one being
        decided ends when its decision is made."""
        waiting = [self.cycle, *(cycle for cycle, _ in self.pipeline)]
        for exchange in waiting:
            if isinstance(exchange, Exchange) and not exchange.deciding:
                self._end(exchange)
        HeadLimits.connection_lost(self, exc)
