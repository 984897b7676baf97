"""Loads the tests put on the release: Grove pods created through the API server by several clients
without pause (as Grove's operator creates them), and clients that try to make a webhook replica
hold memory, connecting to the pod inside the node's namespace as any pod of the cluster could
(the attacks of issue 17, as ``tests/server/test_memory_budget.py`` and
``bench/hostile_clients.py`` make them)."""

from __future__ import annotations

import copy
import ssl
import threading
import time
from itertools import chain, repeat
from typing import Any

from kubernetes import client

from cluster.pods import create
from node.host import NetworkNamespace
from node.pods import connect
from server.hostile import already_answered, write_unless_answered
from server.reviews import VALIDATE, body, review, workload_pcs

MiB = 1024 * 1024
PIECE = 64 * 1024


class Creators:
    """``count`` clients creating copies of ``pod`` through the API server until stopped (or
    ``most`` creates), each without pause or, given ``rate``, at most that many a second; each
    outcome recorded with when it was answered."""

    def __init__(self, admin: client.ApiClient, pod: dict[str, Any], count: int = 3, most: int = 3000,
                 rate: float | None = None) -> None:
        self.admin, self.pod, self.most = admin, pod, most
        self.interval = 1 / rate if rate else 0.0
        self.results: list[tuple[float, str]] = []
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self.create) for _ in range(count)]

    def __enter__(self) -> Creators:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join(60)

    def create(self) -> None:
        due = time.monotonic()
        while not self.done.is_set() and len(self.results) < self.most:
            try:
                stored = create(self.admin, copy.deepcopy(self.pod), timeout=30)
                outcome = "with claims" if stored["spec"].get("resourceClaims") else "without claims"
            except client.ApiException as err:
                outcome = f"refused: {err.status} {err.body}"
            except Exception as err:  # a connection the API server dropped: reported, not raised in a thread
                outcome = f"failed: {err!r}"
            with self.lock:
                self.results.append((time.monotonic(), outcome))
            if self.interval:
                due += self.interval
                self.done.wait(max(0.0, due - time.monotonic()))

    def count(self) -> int:
        return len(self.results)

    def exhausted(self) -> bool:
        """The clients stopped at their bound, ``most`` creates."""
        return self.count() >= self.most

    def failures(self) -> list[str]:
        return [outcome for _, outcome in self.results if outcome != "with claims"]

    def between(self, start: float, end: float) -> int:
        return sum(1 for at, _ in self.results if start <= at <= end)


def head(length: int) -> bytes:
    return (f"POST {VALIDATE} HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


class Attack:
    """Connections each sending ``size`` bytes of body but the last piece (``slow``), or a whole
    review whose answer they never read (``unread``), all held open until ``close``."""

    SETTLE = 2.0

    def __init__(self, netns: NetworkNamespace, ip: str, port: int, ca: bytes) -> None:
        self.netns, self.ip, self.port, self.ca = netns, ip, port, ca
        self.held: list[ssl.SSLSocket] = []
        self.answered = 0
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    def slow_bodies(self, count: int, size: int) -> None:
        self.threads += [threading.Thread(target=self._slow, args=(size,)) for _ in range(count)]

    def unread_answers(self, count: int, uid_bytes: int) -> None:
        large = body(review(workload_pcs(), uid="u" * uid_bytes))
        self.threads += [threading.Thread(target=self._unread, args=(large,)) for _ in range(count)]

    def run(self) -> None:
        for thread in self.threads:
            thread.start()
        for thread in self.threads:
            thread.join(120)

    def _keep(self, tls: ssl.SSLSocket, early: bytes | None) -> None:
        with self.lock:
            if early is None:
                self.held.append(tls)
            else:
                self.answered += 1
                tls.close()

    def _slow(self, size: int) -> None:
        tls = connect(self.netns, self.ip, self.port, self.ca)
        pieces = chain([head(size)], repeat(b" " * PIECE, size // PIECE - 1))
        _, early = write_unless_answered(tls, pieces, most=size)
        deadline = time.monotonic() + self.SETTLE
        while early is None and time.monotonic() < deadline:
            time.sleep(0.05)
            early = already_answered(tls)
        self._keep(tls, early)

    def _unread(self, large: bytes) -> None:
        tls = connect(self.netns, self.ip, self.port, self.ca, receive_buffer=PIECE)
        try:
            tls.sendall(head(len(large)) + large)
            early = None
        except OSError:
            early = b""  # refused (503) and closed before the body was all written
        self._keep(tls, early)

    def close(self) -> None:
        for tls in self.held:
            try:
                tls.close()
            except OSError:
                pass
