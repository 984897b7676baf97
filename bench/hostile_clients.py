"""The memory of ``webhook serve`` under clients that try to exhaust it, as issue 17 found them.

Each attack runs against a fresh server (``python -m webhook serve`` of this tree, default limits,
``--objects`` as given) over TLS on loopback; printed per attack: what the clients saw, the server's
resident memory before (VmRSS) and the highest seen while it ran (sampled every 20 ms), and the
slowest of the ordinary reviews sent meanwhile (each on a new connection). The attacks:

- **lines**: 4 connections each sending header lines of 1 KB without end (for 4 s at most);
- **huge**: one header line of 10 MiB, sent in pieces, then one of 1 MB sent at once;
- **many**: 10,000 headers;
- **bodies**: 50 connections each announcing an 8 MiB body and sending all of it but the last
  piece, then waiting;
- **readers**: 20 connections each sending a review whose uid is 7.5 MB, so that the answer (which
  echoes it) is as large, and never reading.

Run: ``python bench/hostile_clients.py [--objects PATH] [--attack NAME ...]``.
"""

from __future__ import annotations

import argparse
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import orjson
import yaml
from serving import heading

from webhook.certs import ensure

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from server.hostile import already_answered  # noqa: E402  (the suite's hostile clients' own check)
WORKLOAD = ROOT / "examples" / "objects" / "workload-resource-sharing.yaml"
VALIDATE = "/webhooks/validate-podcliqueset"
MiB = 1024 * 1024
PIECE = 64 * 1024


def review(uid: str = "705ab4f5-6393-11e8-b7cc-42010a800002") -> bytes:
    pcs = next(d for d in yaml.safe_load_all(WORKLOAD.read_text()) if d and d["kind"] == "PodCliqueSet")
    pcs["metadata"]["namespace"] = "default"
    request = {
        "uid": uid,
        "kind": {"group": "grove.io", "version": "v1alpha1", "kind": "PodCliqueSet"},
        "resource": {"group": "grove.io", "version": "v1alpha1", "resource": "podcliquesets"},
        "name": "rs-test", "namespace": "default", "operation": "CREATE", "userInfo": {"username": "admin"},
        "object": pcs,
    }
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


REVIEW = review()


REQUEST_LINE = f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\n".encode()


def end_of_head(length: int, close: bool = False) -> bytes:
    connection = b"Connection: close\r\n" if close else b""
    return b"Content-Length: %d\r\n%s\r\n" % (length, connection)


def head(length: int, close: bool = False) -> bytes:
    return REQUEST_LINE + end_of_head(length, close)


class Server:
    """``python -m webhook serve`` on a free port with fresh certificates, until ``stop``."""

    def __init__(self, objects: str) -> None:
        self.directory = Path(tempfile.mkdtemp())
        ensure(self.directory, ["localhost", "127.0.0.1"])
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        command = [
            sys.executable, "-m", "webhook", "serve", "--port", str(self.port), "--objects", objects,
            "--tls-cert", str(self.directory / "tls.crt"), "--tls-key", str(self.directory / "tls.key"),
        ]
        self.log = (self.directory / "server.log").open("wb")
        self.process = subprocess.Popen(command, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT)
        self.context = ssl.create_default_context(cafile=self.directory / "ca.crt")
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            try:
                self.connect().close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the server did not start")

    def connect(self) -> ssl.SSLSocket:
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        return self.context.wrap_socket(raw, server_hostname="localhost")

    def rss(self) -> int:
        with open(f"/proc/{self.process.pid}/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        self.log.close()


class PeakMemory(threading.Thread):
    def __init__(self, server: Server) -> None:
        super().__init__(daemon=True)
        self.server, self.peak, self.done = server, server.rss(), threading.Event()
        self.start()

    def run(self) -> None:
        while not self.done.wait(0.02):
            try:
                self.peak = max(self.peak, self.server.rss())
            except (OSError, StopIteration):
                return


def status_of(first: bytes) -> str:
    return first.split(b" ", 2)[1].decode() if first.startswith(b"HTTP/1.1 ") else "closed"


def send(tls: ssl.SSLSocket, pieces: Iterable[bytes], seconds: float) -> str:
    """Sends until the server answers or closes, or ``seconds`` pass: what it answered, or "no
    answer" when it said nothing within 2 s of the last piece."""
    deadline = time.monotonic() + seconds
    try:
        for piece in pieces:
            said = already_answered(tls)
            if said is not None:
                return status_of(said)
            if time.monotonic() > deadline:
                return "still reading"
            tls.sendall(piece)
    except (OSError, ssl.SSLError):
        pass
    tls.settimeout(2.0)
    try:
        return status_of(tls.recv(200))
    except (OSError, ssl.SSLError):
        return "no answer"


def ordinary(server: Server) -> float:
    """Seconds an ordinary review takes on a new connection."""
    started = time.monotonic()
    with server.connect() as tls:
        tls.sendall(head(len(REVIEW), close=True) + REVIEW)
        received = b""
        while chunk := tls.recv(65536):
            received += chunk
    if not received.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"an ordinary review was answered {received[:40]!r}")
    return time.monotonic() - started


def in_threads(count: int, target: Callable[[], str], server: Server) -> tuple[list[str], float]:
    """``target`` in ``count`` threads, ordinary reviews sent meanwhile: what each saw, and the
    slowest review."""
    seen: list[str] = []
    threads = [threading.Thread(target=lambda: seen.append(target())) for _ in range(count)]
    for thread in threads:
        thread.start()
    slowest = 0.0
    while any(thread.is_alive() for thread in threads):
        slowest = max(slowest, ordinary(server))
    for thread in threads:
        thread.join()
    return seen, max(slowest, ordinary(server))


def endless(first: bytes, repeated: bytes) -> Iterator[bytes]:
    yield first
    while True:
        yield repeated


def lines(server: Server) -> tuple[str, float]:
    line = b"X-Pad: " + b"a" * 1000 + b"\r\n"
    seen, slowest = in_threads(4, lambda: send(server.connect(), endless(REQUEST_LINE, line), 4), server)
    return ", ".join(seen), slowest


def huge(server: Server) -> tuple[str, float]:
    rest = b"\r\n" + end_of_head(len(REVIEW)) + REVIEW
    ten = send(server.connect(), [REQUEST_LINE + b"X-Huge: ", *[b"a" * PIECE] * (10 * MiB // PIECE), rest], 10)
    one = send(server.connect(), [REQUEST_LINE + b"X-Huge: " + b"a" * 1_000_000 + rest], 10)
    return f"10 MiB: {ten}, 1 MB: {one}", ordinary(server)


def many(server: Server) -> tuple[str, float]:
    headers = b"".join(b"X-H%d: v\r\n" % n for n in range(10_000))
    return send(server.connect(), [REQUEST_LINE + headers + end_of_head(len(REVIEW)) + REVIEW], 10), ordinary(server)


def bodies(server: Server) -> tuple[str, float]:
    held: list[ssl.SSLSocket] = []

    def slow_body() -> str:
        tls = server.connect()
        pieces = [head(8 * MiB), *[b" " * PIECE] * (8 * MiB // PIECE - 1)]
        seen = send(tls, pieces, 60)
        if seen == "no answer":
            held.append(tls)
            return "held"
        return seen

    seen, slowest = in_threads(50, slow_body, server)
    for tls in held:
        tls.close()
    return ", ".join(f"{count} {what}" for what, count in sorted(Counter(seen).items())), slowest


def readers(server: Server) -> tuple[str, float]:
    large = review("u" * 7_500_000)
    open_connections = []
    slowest = 0.0
    for _ in range(20):
        tls = server.connect()
        try:
            tls.sendall(head(len(large)) + large)
        except OSError:
            pass
        open_connections.append(tls)
        slowest = max(slowest, ordinary(server))
    for tls in open_connections:
        tls.close()
    return f"{len(large):,}-byte answers, none read", slowest


ATTACKS = {"lines": lines, "huge": huge, "many": many, "bodies": bodies, "readers": readers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", default=str(WORKLOAD), help="the store's manifests (a file or directory)")
    parser.add_argument("--attack", nargs="+", choices=sorted(ATTACKS), default=list(ATTACKS))
    arguments = parser.parse_args()
    print(heading() + "\n")
    print("| attack | what the clients saw | RSS before MiB | peak MiB | slowest ordinary review s |\n|---|---|---|---|---|")
    for name in arguments.attack:
        server = Server(arguments.objects)
        try:
            peak = PeakMemory(server)
            before = peak.peak
            seen, slowest = ATTACKS[name](server)
            peak.done.set()
            peak.join()
            alive = "" if server.process.poll() is None else " (the server died)"
            print(f"| {name} | {seen}{alive} | {before / MiB:.0f} | {peak.peak / MiB:.0f} | {slowest:.3f} |", flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
