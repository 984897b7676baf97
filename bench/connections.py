"""What a connection costs ``webhook serve`` in memory, against Go's ``net/http`` (perf/goref), and
whether the memory comes back after bursts (issue 41).

Each kind of connection is held ``--count`` times against a fresh server of each side, over TLS on
loopback; printed per kind and side: the server's resident memory (VmRSS) before and with them all
open, and the difference per connection. The kinds:

- **bare**: TCP connections that send nothing;
- **partial**: connections that send the first half of a TLS ClientHello, then nothing;
- **idle**: TLS connections that made one request (``/healthz``) and stay open, kept alive.

Then ``--bursts`` bursts of ``--burst`` connections of ``--burst-kind`` against one fresh
``webhook serve``: opened, closed, and the server's memory ``--settle`` seconds after each. Last,
``--max-connections``: a server with a small cap, filled, then a connection past it and a review on a
connection opened before.

Run: ``python bench/connections.py --goref PATH [--count N] [--only bare,partial,idle]``; the goref
binary is built from perf/goref (perf/README.md). Both servers need ``ulimit -n`` above
``--count``, and so does this process.
"""

from __future__ import annotations

import argparse
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from webhook.certs import ensure

ROOT = Path(__file__).resolve().parents[1]
MiB = 1024 * 1024
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"


@dataclass
class Side:
    name: str
    process: subprocess.Popen[bytes]
    port: int
    context: ssl.SSLContext

    def rss(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_serving(side: Side) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if side.process.poll() is not None:
            raise RuntimeError(f"{side.name} exited with {side.process.returncode}")
        try:
            idle(side).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{side.name} did not start")


@contextmanager
def server(kind: str, certs: Path, goref: Path, *extra: str) -> Iterator[Side]:
    port = free_port()
    if kind == "python":
        command = [sys.executable, "-m", "webhook", "serve", "--port", str(port), "--tls-cert", str(certs / "tls.crt"),
                   "--tls-key", str(certs / "tls.key"), "--objects", str(ROOT / "examples" / "objects"),
                   "--log-level", "warning", *extra]
    else:
        command = [str(goref), "-addr", f"127.0.0.1:{port}", "-cert", str(certs / "tls.crt"), "-key", str(certs / "tls.key")]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    context = ssl.create_default_context(cafile=certs / "ca.crt")
    side = Side(kind, process, port, context)
    try:
        wait_serving(side)
        time.sleep(1)
        yield side
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def client_hello(context: ssl.SSLContext) -> bytes:
    """A real ClientHello's bytes, as this side's client would send them."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def bare(side: Side) -> socket.socket:
    return side.connect()


def partial(side: Side) -> socket.socket:
    sock = side.connect()
    hello = client_hello(side.context)
    sock.sendall(hello[: len(hello) // 2])
    return sock


def idle(side: Side) -> socket.socket:
    tls = side.context.wrap_socket(side.connect(), server_hostname="localhost")
    tls.sendall(HEALTHZ)
    received = b""
    while b"\r\n\r\n" not in received or not received.rstrip().endswith((b"}", b"ok")):
        chunk = tls.recv(65536)
        if not chunk:
            raise ConnectionError("closed before answering")
        received += chunk
    return tls


KINDS: dict[str, Callable[[Side], socket.socket]] = {"bare": bare, "partial": partial, "idle": idle}


def settled_rss(side: Side, seconds: float = 2.0) -> int:
    time.sleep(seconds)
    return side.rss()


def established(port: int) -> int:
    """Connections the kernel has established to ``port`` on loopback, its side of them."""
    local = f":{port:04X} "
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for line in lines if line.split()[1].endswith(local.strip()) and line.split()[3] == "01")


def opened(side: Side, kind: str, count: int) -> list[socket.socket]:
    """``count`` connections of ``kind``, made from a few threads (TLS handshakes let go of the GIL),
    so that all are open well within either server's 120 s idle timeout."""
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda _: KINDS[kind](side), range(count)))


def hold(side: Side, kind: str, count: int) -> tuple[int, int, int]:
    """RSS before and with ``count`` connections of ``kind`` open, and how many the server has."""
    before = side.rss()
    held = opened(side, kind, count)
    with_them = settled_rss(side)
    open_now = established(side.port)
    for sock in held:
        sock.close()
    return before, with_them, open_now


def per_connection(args: argparse.Namespace, certs: Path) -> None:
    """Per connection: the RSS grown over the connections the server's side holds (``open``)."""
    long = ("--max-connections", str(args.count + 100), "--header-timeout", "60", "--keep-alive-timeout", "600")
    print(f"{'kind':8} {'server':7} {'open':>6} {'before MiB':>10} {'with MiB':>9} {'KiB each':>9}")
    sides = ("python", "goref") if args.goref.is_file() else ("python",)
    if len(sides) == 1:
        print(f"no goref at {args.goref} (GOREF or --goref): this server alone")
    for kind in args.only.split(","):
        each = {}
        for name in sides:
            with server(name, certs, args.goref, *long) as side:
                before, with_them, open_now = hold(side, kind, args.count)
            each[name] = (with_them - before) / open_now / 1024
            print(f"{kind:8} {name:7} {open_now:6} {before / MiB:10.1f} {with_them / MiB:9.1f} {each[name]:9.1f}", flush=True)
        if "goref" in each:
            print(f"{kind:8} ratio   {each['python'] / each['goref']:>37.2f}", flush=True)


def bursts(args: argparse.Namespace, certs: Path) -> None:
    with server("python", certs, args.goref, "--max-connections", str(args.burst + 100)) as side:
        print(f"bursts of {args.burst} {args.burst_kind} connections, RSS {args.settle:g} s after each; before: {side.rss() / MiB:.1f} MiB")
        first = None
        for n in range(1, args.bursts + 1):
            held = opened(side, args.burst_kind, args.burst)
            peak = settled_rss(side, 1.0)
            for sock in held:
                sock.close()
            after = settled_rss(side, args.settle)
            first = first if first is not None else after
            print(f"burst {n}: with them {peak / MiB:.1f} MiB, after {after / MiB:.1f} MiB ({(after - first) / MiB:+.1f} from the first)", flush=True)


def capped(args: argparse.Namespace, certs: Path) -> None:
    cap = 200
    with server("python", certs, args.goref, "--max-connections", str(cap), "--header-timeout", "60") as side:
        kept = idle(side)
        filler = opened(side, "bare", cap - 1)
        time.sleep(0.5)
        past = side.connect()
        past.settimeout(5)
        try:
            seen = "nothing sent, closed" if past.recv(1) == b"" else "bytes"
        except ConnectionResetError:
            seen = "connection reset"
        except TimeoutError:
            seen = "no answer in 5 s"
        kept.sendall(HEALTHZ)
        answer = kept.recv(65536).split(b"\r\n", 1)[0].decode()
        print(f"max-connections {cap}: {cap} open; the next connection: {seen}; a request on one opened before: {answer}")
        for sock in [*filler, past, kept]:
            sock.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--goref", type=Path, default=Path(os.environ.get("GOREF", "goref")))
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--only", default="bare,partial,idle")
    parser.add_argument("--bursts", type=int, default=5)
    parser.add_argument("--burst", type=int, default=3_000)
    parser.add_argument("--burst-kind", default="bare", choices=KINDS)
    parser.add_argument("--settle", type=float, default=30.0)
    parser.add_argument("--skip", default="", help="comma-separated: kinds, bursts, cap")
    args, _ = parser.parse_known_args()  # bench/run.py hands every script the same arguments
    skip = set(args.skip.split(","))
    with tempfile.TemporaryDirectory() as directory:
        certs = Path(directory)
        ensure(certs, ["localhost", "127.0.0.1"])
        if "kinds" not in skip:
            per_connection(args, certs)
        if "bursts" not in skip:
            bursts(args, certs)
        if "cap" not in skip:
            capped(args, certs)


if __name__ == "__main__":
    main()
