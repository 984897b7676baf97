"""``python -m webhook serve`` as a real process on a free loopback port, with fresh certificates."""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from webhook.certs import ensure

DEADLINE = 15.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def poll(condition: Callable[[], object], what: str, deadline: float = DEADLINE) -> object:
    """The first truthy value of ``condition()``, retried until the deadline."""
    end = time.monotonic() + deadline
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def make_certs(directory: Path) -> Path:
    ensure(directory, ["localhost", "127.0.0.1"])
    return directory


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    url: str
    ca: Path
    log: Path

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, verify=ssl.create_default_context(cafile=self.ca), timeout=10)

    def log_text(self) -> str:
        return self.log.read_text()

    def terminate(self) -> None:
        self.process.send_signal(signal.SIGTERM)

    def exit_code(self) -> int:
        return self.process.wait(timeout=DEADLINE)


def _healthy(url: str, ca: Path | None, process: subprocess.Popen[bytes], log: Path) -> bool:
    if process.poll() is not None:
        raise AssertionError(f"server exited with {process.returncode}: {log.read_text()}")
    try:
        with httpx.Client(verify=ssl.create_default_context(cafile=ca) if ca else False, timeout=1) as client:
            return client.get(f"{url}/healthz").status_code == 200
    except (httpx.TransportError, OSError):  # OSError: a CA file the server has not written yet
        return False


@contextmanager
def serve(tmp_path: Path, *args: str, cert: Path | None = None, key: Path | None = None, ca: Path | None = None,
          verify: bool = True, program: tuple[str, ...] = ("-m", "webhook")) -> Iterator[Served]:
    """The server with certificates made in ``tmp_path`` (or the given ones) and ``args``; with
    ``verify`` false, alive once it answers whatever its certificate (a placeholder's, say).
    ``program``: what Python runs, e.g. ``("-c", script)`` for a script calling ``webhook.cli.main``."""
    if cert is None or key is None or ca is None:
        certs = make_certs(tmp_path / "certs")
        cert, key, ca = certs / "tls.crt", certs / "tls.key", certs / "ca.crt"
    port = free_port()
    log = tmp_path / "server.log"
    command = [sys.executable, *program, "serve", "--port", str(port), "--tls-cert", str(cert), "--tls-key", str(key), *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBHOOK_") and k != "KUBERNETES_SERVICE_HOST"}
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env)
    served = Served(process, f"https://localhost:{port}", ca, log)
    try:
        poll(lambda: _healthy(served.url, ca if verify else None, process, log), "the server to answer /healthz")
        yield served
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
