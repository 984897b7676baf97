"""The project's commands (``python -m webhook serve``, ``reconcile``) as processes beside the
control plane, authenticated as the chart's ServiceAccount, restartable on the same port."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

DEADLINE = 30.0


def environment() -> dict[str, str]:
    """This environment without the settings of a pod or of the caller's own webhook."""
    return {k: v for k, v in os.environ.items() if not k.startswith("WEBHOOK_") and k != "KUBERNETES_SERVICE_HOST"}


@dataclass
class Command:
    """``python -m webhook <args>``, its output in ``log``."""

    args: list[str]
    log: Path
    process: subprocess.Popen[bytes] | None = None
    offset: int = 0

    def start(self) -> None:
        assert not self.running(), "already running"
        self.offset = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as output:
            self.process = subprocess.Popen([sys.executable, "-m", "webhook", *self.args], stdout=output,
                                            stderr=subprocess.STDOUT, env=environment())

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, sig: signal.Signals = signal.SIGTERM, deadline: float = DEADLINE) -> int:
        """Sends ``sig`` and returns the exit code."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=deadline)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"{self.args[0]} did not exit within {deadline:g} s after {sig.name}") from None

    def text(self) -> str:
        """What the process wrote since it was last started."""
        with self.log.open("rb") as log:
            log.seek(self.offset)
            return log.read().decode(errors="replace")


@dataclass
class WebhookServer:
    """``webhook serve`` with the cluster store on ``port``, serving ``cert``/``key``."""

    port: int
    cert: Path
    key: Path
    ca: Path
    kubeconfig: Path
    log: Path
    extra: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.command = Command([
            "serve", "--host", "127.0.0.1", "--port", str(self.port), "--tls-cert", str(self.cert),
            "--tls-key", str(self.key), "--kubeconfig", str(self.kubeconfig), "--log-format", "text",
            "--log-level", "info", *self.extra,
        ], self.log)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self) -> WebhookServer:
        self.command.start()
        self.wait_ready()
        return self

    def ready(self) -> bool:
        try:
            with httpx.Client(verify=ssl.create_default_context(cafile=self.ca), timeout=1) as client:
                return client.get(f"{self.url}/readyz").status_code == 200
        except (httpx.TransportError, OSError):  # OSError: a CA file the server has not written yet
            return False

    def wait_ready(self, deadline: float = DEADLINE) -> None:
        end = time.monotonic() + deadline
        while not self.ready():
            if not self.command.running():
                raise AssertionError(f"webhook serve exited:\n{self.command.text()[-3000:]}")
            if time.monotonic() > end:
                raise AssertionError(f"webhook serve not ready within {deadline:g} s:\n{self.command.text()[-3000:]}")
            time.sleep(0.05)

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        return self.command.stop(sig)

    def running(self) -> bool:
        return self.command.running()


def certificate_controller(release: str, namespace: str, host: str = "127.0.0.1", *extra: str) -> list[str]:
    """``serve`` options of the chart's controller mode for ``release`` (its fullname), as its
    Deployment sets them, for a server the API server calls at ``host``."""
    return ["--cert-secret", f"{release}-certificate", "--cert-secret-namespace", namespace,
            "--webhook-configuration", release, "--cert-hosts", host, "--cert-check-interval", "1", *extra]


LEASE = "grove-sharing-webhook-reconciler"
"""The Lease the chart's reconcilers elect a leader with (``<fullname>-reconciler``)."""


def reconciler(kubeconfig: Path, namespace: str, log: Path, *extra: str) -> Command:
    """``webhook reconcile`` as the chart runs it (leader election on the chart's Lease in the
    release namespace), reading the cluster through ``kubeconfig``."""
    return Command([
        "reconcile", "--kubeconfig", str(kubeconfig), "--leader-elect", "--leader-election-id", LEASE,
        "--leader-election-namespace", namespace, "--health-port", "0", "--log-format", "text", *extra,
    ], log)
