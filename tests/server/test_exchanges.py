"""Webhook requests answered by the connection itself (``webhook.server.connection.exchanges``): what a client
sees on the wire, in order, under the endpoint's limits, and what the server lets go afterwards.

The connection is the production protocol over a transport that records what is written, so each
case (pipelining, ``Expect: 100-continue``, a late body, a gone client) is played exactly."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import orjson
import pytest
import uvicorn
from server.wire import Wire
from uvicorn.server import ServerState

from webhook.core.admission import Answer
from webhook.server.budget import Budget
from webhook.server.connection.limits import Limits
from webhook.server.connection.protocol import ServerProtocol
from webhook.server.connection.turns import LoopTurn
from webhook.server.endpoint import WebhookEndpoint
from webhook.server.lifecycle import Lifecycle
from webhook.server.metrics import ServerMetrics
from webhook.stores.embedded import EmbeddedStore

LIMIT = 1000
DEADLINE = 5.0


async def echo(body: bytes) -> Answer:
    return Answer(200, {"got": body.decode()}, "CREATE", "allowed")


async def probe(scope: Any, receive: Any, send: Any) -> None:
    """The app behind the connection: what is not a webhook's POST, answered after a moment."""
    await asyncio.sleep(0.01)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"5")]})
    await send({"type": "http.response.body", "body": b"probe"})


class Connection:
    def __init__(
        self, respond: Callable[[bytes], Awaitable[Answer]] = echo, body_timeout: float = 30.0, access_log: bool = False, turn: LoopTurn | None = None
    ) -> None:
        config = uvicorn.Config(probe, http=ServerProtocol, ws="none", lifespan="off", log_config=None, access_log=access_log)
        config.load()
        self.lifecycle = Lifecycle()
        self.budget = Budget(1 << 20)
        self.metrics = ServerMetrics(EmbeddedStore.of([]), self.lifecycle, self.budget)
        endpoint = WebhookEndpoint("hook", respond, self.metrics, LIMIT, body_timeout, budget=self.budget, lifecycle=self.lifecycle)
        self.protocol = ServerProtocol(
            config=config, server_state=ServerState(), app_state={}, _loop=asyncio.get_running_loop(),
            lifecycle=self.lifecycle, budget=self.budget, limits=Limits(5.0, 8192, 4096, 100, 5.0),
            turn=turn or LoopTurn(asyncio.get_running_loop()), webhooks={b"/hook": endpoint},
        )
        self.wire = Wire()
        self.protocol.connection_made(self.wire)

    def send(self, data: bytes) -> None:
        self.protocol.data_received(data)

    async def answers(self, count: int) -> list[tuple[bytes, bytes]]:
        """The first ``count`` answers on the wire (head, body), waited for."""
        deadline = asyncio.get_running_loop().time() + DEADLINE
        while True:
            found = _split(bytes(self.wire.data))
            if len(found) >= count:
                return found[:count]
            assert asyncio.get_running_loop().time() < deadline, f"{len(found)} answers of {count}: {bytes(self.wire.data)!r}"
            await asyncio.sleep(0.005)

    def let_go(self) -> bool:
        return self.budget.held == 0 and self.metrics.in_flight["hook"] == 0


def _split(data: bytes) -> list[tuple[bytes, bytes]]:
    found = []
    while b"\r\n\r\n" in data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
        if len(rest) < length:
            break
        found.append((head, rest[:length]))
        data = rest[length:]
    return found


def post(body: bytes, path: str = "/hook?timeout=10s", extra: str = "", version: str = "1.1") -> bytes:
    return f"POST {path} HTTP/{version}\r\nHost: webhook\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


def played(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


def test_a_webhook_request_is_answered_in_one_write_on_a_kept_alive_connection() -> None:
    async def scenario() -> None:
        connection = Connection()
        connection.send(post(b"one"))
        [(head, body)] = await connection.answers(1)
        assert head.startswith(b"HTTP/1.1 200 OK") and b"connection: close" not in head
        assert orjson.loads(body) == {"got": "one"}
        assert not connection.wire.closed and connection.let_go()

    played(scenario)


def test_the_requests_read_in_one_turn_are_decided_once_all_of_them_are_read() -> None:
    """Under load one turn of the loop reads several connections' requests: none is decided
    between two reads (``turns``)."""

    async def scenario() -> None:
        read: list[str] = []
        decided: list[tuple[str, list[str]]] = []  # each decision, with the requests read by then

        async def noted(body: bytes) -> Answer:
            decided.append((body.decode(), list(read)))
            return await echo(body)

        turn = LoopTurn(asyncio.get_running_loop())
        first, second = Connection(noted, turn=turn), Connection(noted, turn=turn)
        for connection, body in ((first, "a"), (second, "b")):
            connection.send(post(body.encode()))
            read.append(body)
        assert decided == []
        assert [orjson.loads(body) for _, body in (*await first.answers(1), *await second.answers(1))] == [{"got": "a"}, {"got": "b"}]
        assert decided == [("a", ["a", "b"]), ("b", ["a", "b"])]

    played(scenario)


def test_a_bug_of_ours_deciding_is_logged_and_its_client_cut_off_leaving_nothing_held(caplog: pytest.LogCaptureFixture) -> None:
    async def broken(body: bytes) -> Answer:
        raise RuntimeError("a bug")

    async def scenario() -> None:
        connection = Connection(broken)
        connection.send(post(b"one"))
        for _ in range(100):
            if connection.wire.closed:
                break
            await asyncio.sleep(0)
        assert connection.wire.closed and connection.wire.data == b"" and connection.let_go()

    played(scenario)
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage() == "internal error answering a request of webhook hook" and record.exc_info is not None


def test_pipelined_requests_are_answered_in_the_order_they_came() -> None:
    async def scenario() -> None:
        connection = Connection()
        connection.send(post(b"one") + b"GET /healthz HTTP/1.1\r\nHost: webhook\r\n\r\n" + post(b"two"))
        answers = await connection.answers(3)
        assert [body for _, body in answers] == [b'{"got":"one"}', b"probe", b'{"got":"two"}']
        assert connection.let_go()

    played(scenario)


def test_a_request_behind_a_slow_decision_waits_for_its_answer() -> None:
    async def scenario() -> None:
        release = asyncio.Event()

        async def slow(body: bytes) -> Answer:
            await release.wait()
            return await echo(body)

        connection = Connection(slow)
        connection.send(post(b"one") + post(b"two"))
        await asyncio.sleep(0.05)
        assert connection.wire.data == b""
        release.set()
        assert [body for _, body in await connection.answers(2)] == [b'{"got":"one"}', b'{"got":"two"}']

    played(scenario)


def test_a_content_length_over_the_limit_is_refused_before_the_body_is_read() -> None:
    async def scenario() -> None:
        connection = Connection()
        connection.send(f"POST /hook HTTP/1.1\r\nHost: webhook\r\nContent-Length: {LIMIT + 1}\r\n\r\n".encode())
        [(head, body)] = await connection.answers(1)
        assert head.startswith(b"HTTP/1.1 413") and b"connection: close" in head
        assert orjson.loads(body) == {"error": f"request body is larger than the limit of {LIMIT} bytes"}
        assert connection.wire.closed and connection.let_go()

    played(scenario)


def test_a_chunked_body_growing_past_the_limit_is_refused_as_it_comes() -> None:
    async def scenario() -> None:
        connection = Connection()
        connection.send(b"POST /hook HTTP/1.1\r\nHost: webhook\r\nTransfer-Encoding: chunked\r\n\r\n")
        connection.send(b"%x\r\n%s\r\n" % (LIMIT // 2, b"x" * (LIMIT // 2)))
        assert connection.budget.held == LIMIT // 2
        connection.send(b"%x\r\n%s\r\n" % (LIMIT, b"x" * LIMIT))
        [(head, _)] = await connection.answers(1)
        assert head.startswith(b"HTTP/1.1 413") and connection.wire.closed and connection.let_go()

    played(scenario)


def test_expect_100_continue_is_answered_before_the_body_is_sent() -> None:
    async def scenario() -> None:
        connection = Connection()
        connection.send(b"POST /hook HTTP/1.1\r\nHost: webhook\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
        await asyncio.sleep(0)
        assert bytes(connection.wire.data) == b"HTTP/1.1 100 Continue\r\n\r\n"
        connection.send(b"one")
        [_, (head, body)] = await connection.answers(2)
        assert head.startswith(b"HTTP/1.1 200") and body == b'{"got":"one"}'

    played(scenario)


def test_a_body_not_sent_in_time_is_answered_408_and_let_go() -> None:
    async def scenario() -> None:
        connection = Connection(body_timeout=0.05)
        connection.send(post(b"half")[:-2])
        assert connection.budget.held == 2
        [(head, body)] = await connection.answers(1)
        assert head.startswith(b"HTTP/1.1 408") and b"within 0.05 s" in body
        assert connection.wire.closed and connection.let_go()

    played(scenario)


def test_a_client_gone_mid_body_or_mid_decision_leaves_nothing_held() -> None:
    async def scenario() -> None:
        connection = Connection()
        connection.send(post(b"half")[:-2])
        connection.protocol.connection_lost(None)
        assert connection.let_go()

        release = asyncio.Event()

        async def slow(body: bytes) -> Answer:
            await release.wait()
            return await echo(body)

        deciding = Connection(slow)
        deciding.send(post(b"one"))
        await asyncio.sleep(0.01)
        deciding.wire.closed = True
        deciding.protocol.connection_lost(None)
        release.set()
        while not deciding.let_go():
            await asyncio.sleep(0.005)
        assert deciding.wire.data == b""

    played(scenario)


def test_while_draining_and_for_http_1_0_the_answer_closes_its_connection() -> None:
    async def scenario() -> None:
        draining = Connection()
        draining.lifecycle.draining = True
        draining.send(post(b"one"))
        [(head, _)] = await draining.answers(1)
        assert b"connection: close" in head and draining.wire.closed

        old = Connection()
        old.send(post(b"one", version="1.0"))
        [(head, _)] = await old.answers(1)
        assert b"connection: close" in head and old.wire.closed

    played(scenario)


def test_a_large_answer_is_written_whole_and_its_bytes_let_go() -> None:
    async def large(body: bytes) -> Answer:
        return Answer(200, {"got": "x" * 300_000}, "CREATE", "allowed")

    async def scenario() -> None:
        connection = Connection(large)
        connection.send(post(b"one"))
        [(_, body)] = await connection.answers(1)
        assert len(orjson.loads(body)["got"]) == 300_000
        while not connection.let_go():
            await asyncio.sleep(0.005)

    played(scenario)


def test_the_access_log_has_a_line_for_each_webhook_request(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        connection = Connection(access_log=True)
        connection.send(post(b"one"))
        await connection.answers(1)

    with caplog.at_level(logging.INFO, logger="uvicorn.access"):
        played(scenario)
    assert [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"] == [' - "POST /hook?timeout=10s HTTP/1.1" 200']


def test_a_decision_cut_off_at_the_drains_end_writes_nothing_and_leaves_nothing_held() -> None:
    async def stuck(body: bytes) -> Answer:
        await asyncio.Event().wait()
        raise AssertionError("never decided")

    async def scenario(turns: int) -> None:
        connection = Connection(stuck)
        connection.send(post(b"one"))
        for _ in range(100):  # decided at the end of the loop's turn, where it begins to wait
            if connection.protocol.tasks:
                break
            await asyncio.sleep(0)
        [task] = connection.protocol.tasks
        for _ in range(turns):
            await asyncio.sleep(0)
        connection.lifecycle.closed = True
        task.cancel()
        await asyncio.wait([task])
        assert connection.wire.data == b"" and connection.let_go()

    asyncio.run(scenario(turns=1))
    asyncio.run(scenario(turns=0))  # cancelled before its task began
