"""SIGTERM as a rolling restart sends it: readiness fails at once, clients are moved off while the
listener still accepts, no request written is left unanswered, and the process exits 0 in bounded
time whatever its clients do."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from server.goclient import Answer, GoLikeClient, Lost, NotSent
from server.reviews import VALIDATE, WORKLOAD, body, review, workload_pcs
from server.serverproc import Served, poll, serve

from webhook.server.app import WebhookEndpoint
from webhook.server.limits import Budget, Lifecycle, RequestLimits
from webhook.server.metrics import ServerMetrics
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

REVIEW = body(review(workload_pcs()))


class HalfSentRequest:
    """A webhook call whose body is only half sent: under way until ``finish``."""

    def __init__(self, served: Served, content: bytes) -> None:
        context = ssl.create_default_context(cafile=served.ca)
        self.tls = context.wrap_socket(socket.create_connection(("127.0.0.1", port_of(served))), server_hostname="localhost")
        head = (
            f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(content)}\r\n\r\n"
        ).encode()
        self.rest = content[len(content) // 2 :]
        self.tls.sendall(head + content[: len(content) // 2])

    def finish(self) -> tuple[int, dict[str, object]]:
        self.tls.sendall(self.rest)
        received = b""
        while chunk := self.tls.recv(65536):
            received += chunk
        self.tls.close()
        head, _, payload = received.partition(b"\r\n\r\n")
        return int(head.split()[1]), orjson.loads(payload)


def port_of(served: Served) -> int:
    port = urlsplit(served.url).port
    assert port is not None
    return port


def readyz(served: Served) -> int:
    with served.client() as client:
        return client.get("/readyz").status_code


def answered(served: Served) -> float:
    """Reviews the server has answered, from its metrics."""
    with served.client() as client:
        text = client.get("/metrics").text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("webhook_requests_total{"))


def exit_seconds(served: Served, since: float) -> float:
    assert served.exit_code() == 0, served.log_text()
    return time.monotonic() - since


def test_sigterm_fails_readiness_lets_requests_in_flight_finish_and_exits_0(tmp_path: Path) -> None:
    with serve(tmp_path, "--objects", str(WORKLOAD), "--shutdown-delay", "0.5") as served:
        in_flight = [HalfSentRequest(served, body(review(workload_pcs(), uid=f"uid-{i}"))) for i in range(3)]
        assert readyz(served) == 200

        served.terminate()
        poll(lambda: readyz(served) == 503, "readiness to fail after SIGTERM")
        poll(lambda: "Shutting down" in served.log_text(), "the listener to close")

        answers = [request.finish() for request in in_flight]
        assert [(status, data["response"]["uid"], data["response"]["allowed"]) for status, data in answers] == [  # type: ignore[index]
            (200, f"uid-{i}", True) for i in range(3)
        ]
        assert served.exit_code() == 0


CLIENTS = 8
RUN_LIMIT = 30.0
"""Seconds a client keeps sending at most, whatever happens: the loops are bounded."""


@dataclass
class Load:
    """Clients sending reviews one after another until the server stops taking connections."""

    served: Served
    answers: list[Answer] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self) -> None:
        client = GoLikeClient(port_of(self.served), self.served.ca)
        end = time.monotonic() + RUN_LIMIT
        try:
            while time.monotonic() < end:
                try:
                    answer = client.post(VALIDATE, REVIEW)
                except NotSent:
                    return  # the listener has closed: a real caller now goes to another replica
                except Lost as err:
                    with self.lock:
                        self.lost.append(str(err))
                    continue
                with self.lock:
                    self.answers.append(answer)
        finally:
            client.close()

    def count(self) -> int:
        with self.lock:
            return len(self.answers)


def test_a_rolling_restart_under_load_loses_no_request(tmp_path: Path) -> None:
    """Two restarts under clients that behave like the API server's: every request written is
    answered, those sent once readiness has failed are told ``Connection: close``, new connections are
    still served during the delay, and the process exits 0."""
    for restart in range(2):
        with serve(tmp_path / str(restart), "--objects", str(WORKLOAD), "--shutdown-delay", "1") as served:
            load = Load(served)
            threads = [threading.Thread(target=load.run) for _ in range(CLIENTS)]
            for thread in threads:
                thread.start()
            poll(lambda: load.count() >= 5 * CLIENTS, "the clients to get going")

            served.terminate()
            terminated = time.monotonic()
            poll(lambda: readyz(served) == 503, "readiness to fail", deadline=2)
            not_ready = time.monotonic()
            assert not_ready - terminated < 0.5
            for thread in threads:
                thread.join(RUN_LIMIT + 5)
            assert exit_seconds(served, terminated) < 10

        assert load.lost == []
        after = [a for a in load.answers if a.sent_at > not_ready]
        assert after, "no request was answered during the shutdown delay"
        assert all(a.status == 200 and a.closes for a in after)


def test_a_client_that_never_reads_does_not_hold_the_exit(tmp_path: Path) -> None:
    """It sends a request and then neither reads nor closes: the TLS close waits for it (30 s in
    uvloop), so it is cut off at ``--drain-timeout`` instead."""
    with serve(tmp_path, "--objects", str(WORKLOAD), "--shutdown-delay", "0.5", "--drain-timeout", "2") as served:
        context = ssl.create_default_context(cafile=served.ca)
        stuck = context.wrap_socket(socket.create_connection(("127.0.0.1", port_of(served))), server_hostname="localhost")
        stuck.sendall(f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Length: {len(REVIEW)}\r\n\r\n".encode() + REVIEW)
        poll(lambda: answered(served) == 1, "the request to be answered")
        served.terminate()
        terminated = time.monotonic()
        assert exit_seconds(served, terminated) < 0.5 + 2 + 2
        stuck.close()


def test_a_request_still_under_way_at_the_drain_timeout_is_cut_off_with_uvicorns_line_only(tmp_path: Path) -> None:
    """Its body stopped half-way (the body timeout is longer than the drain, as with the defaults):
    the exit waits for it no longer than ``--drain-timeout``, and uvicorn's line that it cancelled
    the request is all the log says of it."""
    options = ("--shutdown-delay", "0.5", "--drain-timeout", "2", "--body-timeout", "30")
    with serve(tmp_path, "--objects", str(WORKLOAD), *options) as served:
        stalled = HalfSentRequest(served, REVIEW)
        served.terminate()
        terminated = time.monotonic()
        seconds = exit_seconds(served, terminated)
        assert 0.5 + 2 - 0.2 < seconds < 0.5 + 2 + 2
        log = served.log_text()
        stalled.tls.close()
    after = log.partition("Cancel 1 running task(s), timeout graceful shutdown exceeded\n")[2]
    assert [line.split(" ", 3)[-1] for line in after.splitlines()] == ["webhook.server.uvicorn: Finished server process [%d]" % served.process.pid]
    assert "Traceback" not in log and "CancelledError" not in log


def test_a_connection_made_during_the_delay_is_served_and_closed(tmp_path: Path) -> None:
    with serve(tmp_path, "--objects", str(WORKLOAD), "--shutdown-delay", "3") as served:
        with served.client() as kept:
            assert kept.post(VALIDATE, content=REVIEW).headers.get("connection") is None
            served.terminate()
            poll(lambda: readyz(served) == 503, "readiness to fail")
            on_kept = kept.post(VALIDATE, content=REVIEW)
        with httpx.Client(base_url=served.url, verify=ssl.create_default_context(cafile=served.ca)) as fresh:
            on_fresh = fresh.post(VALIDATE, content=REVIEW)
        assert [(r.status_code, r.headers["connection"]) for r in (on_kept, on_fresh)] == [(200, "close")] * 2
        assert served.exit_code() == 0


def cancelled_while_deciding(closed: bool) -> tuple[BaseException | None, int, int]:
    """A request whose decision waits (as for the API server) cancelled, after the listener has
    closed or not: what it raised, and the bytes and requests the server still counts then."""
    async def waits(body: bytes) -> Any:
        await asyncio.Event().wait()

    lifecycle, budget = Lifecycle(closed=closed), Budget(1024 * 1024)
    metrics = ServerMetrics(EmbeddedStore.of([]), lifecycle, budget)
    endpoint = WebhookEndpoint("validate-podcliqueset", waits, metrics)
    app = RequestLimits(endpoint, ServeSettings(), budget, lifecycle)
    scope = {"type": "http", "method": "POST", "path": VALIDATE, "headers": [(b"content-length", b"2")]}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        raise AssertionError(f"nothing is sent: {message}")

    async def run() -> BaseException | None:
        task = asyncio.create_task(app(scope, receive, send))
        await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except BaseException as raised:  # noqa: BLE001 - what it raised is the answer
            return raised
        return None

    raised = asyncio.run(run())
    return raised, budget.held, metrics.in_flight["validate-podcliqueset"]


def test_a_request_cancelled_by_the_drains_cut_ends_quietly_and_lets_its_bytes_go() -> None:
    raised, held, in_flight = cancelled_while_deciding(closed=True)
    assert (raised, held, in_flight) == (None, 0, 0)


def test_a_request_cancelled_while_the_server_runs_is_cancelled() -> None:
    raised, held, in_flight = cancelled_while_deciding(closed=False)
    assert (type(raised), held, in_flight) == (asyncio.CancelledError, 0, 0)
