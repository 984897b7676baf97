"""Measuring the claim reconciler: ``python -m webhook reconcile`` in a child process, as in a pod,
against the tests' fake API server in this process.

Importable by the benchmark scripts (``from reconciling import Reconciler``); run them as
``python bench/<script>.py`` so this directory is on ``sys.path``. ``--source DIR`` runs the
reconciler of another checkout (the commit before a change, say) against the same scenario.
"""

from __future__ import annotations

import collections
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakeapi import FakeApiServer, wait_until  # noqa: E402


class Reconciler:
    """The reconciler as a process: its log lines, memory, CPU and metrics."""

    def __init__(self, kubeconfig: Path, *options: str, source: Path = ROOT, workers: int = 2) -> None:
        # --claims always: the figures are the reconciler's work, not the grace period a first
        # PodCliqueSet waits under auto for an operator that may make its claims (docs/reconciler.md).
        env = {k: v for k, v in os.environ.items() if not k.startswith("WEBHOOK_")} | {"WEBHOOK_CLAIMS": "always"}
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "webhook", "reconcile", "--kubeconfig", str(kubeconfig), "--health-port", "0",
             "--workers", str(workers), "--log-level", "info", *options],
            cwd=source,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        port = wait_until(lambda: self._find(r"probes on [\d.]+:(\d+)"), timeout=30, message="the reconciler started")
        self.metrics_url = f"http://127.0.0.1:{port.group(1)}/metrics"

    def _read(self) -> None:
        assert self.popen.stderr is not None
        for line in self.popen.stderr:
            with self._lock:
                self.lines.append((time.monotonic(), line.rstrip("\n")))

    def _find(self, pattern: str) -> re.Match[str] | None:
        with self._lock:
            return next((m for _, line in self.lines if (m := re.search(pattern, line))), None)

    def log_since(self, since: float) -> list[str]:
        with self._lock:
            return [line for at, line in self.lines if at >= since]

    @property
    def pid(self) -> int:
        return self.popen.pid

    def memory_mib(self) -> tuple[float, float]:
        """(resident now, peak resident) in MiB, from /proc."""
        status = dict(
            line.split(":", 1) for line in Path(f"/proc/{self.pid}/status").read_text().splitlines() if ":" in line
        )
        return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def metric(self, name: str, labels: str = "") -> float | None:
        try:
            with urllib.request.urlopen(self.metrics_url, timeout=5) as response:
                text = response.read().decode()
        except OSError:
            return None
        wanted = f"{name}{{{labels}}}" if labels else name
        for line in text.splitlines():
            if line.startswith(wanted + " "):
                return float(line.rsplit(" ", 1)[1])
        return None

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(30)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def calls(api: FakeApiServer) -> collections.Counter[str]:
    """Requests the reconciler made, by method and resource (watches and this script's own use of
    the server's hooks are not requests)."""
    counted: collections.Counter[str] = collections.Counter()
    for request in api.requests:
        if request.is_watch:
            continue
        segments = request.path.rstrip("/").split("/")
        kinds = ("resourceclaims", "events", "resourceclaimtemplates", "podcliquesets", "podcliquescalinggroups",
                 "podcliques", "leases")
        plural = next((s for s in segments if s in kinds), segments[-1])
        counted[f"{request.method} {plural}"] += 1
    return counted


def quiet(api: FakeApiServer, seconds: float = 1.5, limit: float = 600) -> None:
    """Wait until the reconciler has made no request for ``seconds`` (at most ``limit``)."""
    last, since, began = len(api.requests), time.monotonic(), time.monotonic()
    while time.monotonic() - since < seconds and time.monotonic() - began < limit:
        time.sleep(0.1)
        if len(api.requests) != last:
            last, since = len(api.requests), time.monotonic()


def timed(condition: Callable[[], Any], timeout: float, interval: float = 0.02) -> float | None:
    """Seconds until ``condition()`` holds, or None if it did not within ``timeout``."""
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        if condition():
            return time.monotonic() - began
        time.sleep(interval)
    return None
