"""``python -m webhook reconcile`` as a process: probes, metrics, SIGTERM, one-line errors."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakeapi import FakeApiServer, wait_until
from reconciler.objects import podcliqueset
from webhook.cli import main

ROOT = Path(__file__).resolve().parents[2]


class Process:
    """The command with its stderr read line by line in the background."""

    def __init__(self, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WEBHOOK_")}
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "webhook", "reconcile", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stderr is not None
        for line in self.popen.stderr:
            self.lines.put(line)

    def wait_for_line(self, pattern: str, timeout: float = 10) -> re.Match[str]:
        def found() -> re.Match[str] | None:
            while not self.lines.empty():
                self.seen.append(self.lines.get())
            return next((m for line in self.seen if (m := re.search(pattern, line))), None)

        return wait_until(found, timeout=timeout, message=f"a log line matching {pattern!r}")

    def log(self) -> str:
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return "".join(self.seen)


@pytest.fixture
def process(kubeconfig_path: Path) -> Iterator[Process]:
    running = Process(
        "--kubeconfig", str(kubeconfig_path), "--health-port", "0", "--leader-elect",
        "--lease-duration", "3", "--renew-deadline", "2", "--retry-period", "1",
    )
    yield running
    if running.popen.poll() is None:
        running.popen.kill()
        running.popen.wait()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_probes_metrics_and_a_clean_exit_on_sigterm(fake_api: FakeApiServer, process: Process) -> None:
    port = process.wait_for_line(r"probes on 127\.0\.0\.1:(\d+)").group(1)
    base = f"http://127.0.0.1:{port}"
    assert get(base + "/healthz") == (200, "ok\n")
    wait_until(lambda: get(base + "/readyz") == (200, "ok\n"), message="ready")
    fake_api.create(podcliqueset("solo", [{"name": "gpu", "scope": "PerReplica"}], replicas=2))
    created = 'grove_sharing_reconciler_claim_writes_total{action="created"} 2.0'
    wait_until(lambda: created in get(base + "/metrics")[1], message="claims created and counted")
    status, metrics = get(base + "/metrics")
    assert status == 200
    assert "grove_sharing_reconciler_leader 1.0" in metrics
    assert "grove_sharing_reconciler_caches_synced 1.0" in metrics
    assert get(base + "/nothing")[0] == 404

    process.popen.send_signal(signal.SIGTERM)

    assert process.popen.wait(10) == 0
    log = process.log()
    assert "received SIGTERM" in log and "Traceback" not in log
    lease = fake_api.get("leases", "default", "grove-sharing-reconciler")
    assert lease is not None and not lease["spec"].get("holderIdentity")  # released for a standby


@pytest.mark.parametrize(
    ("argv", "code", "error"),
    [
        (["--kubeconfig", "{tmp}/missing"], 1, "cannot load kubeconfig {tmp}/missing: no such file"),
        (["--workers", "0"], 2, "invalid value '0' for --workers: Input should be greater than or equal to 1"),
        (["--namespace", "a,b"], 2, "invalid value for --namespace: 'a,b' is not one namespace name"),
        (["--lease-duration", "5"], 2, "--lease-duration must be longer than --renew-deadline"),
        (["--kubeconfig", "{kubeconfig}", "--health-port", "{port}"], 1, "cannot listen on 127.0.0.1:{port}: "),
    ],
    ids=["unreadable-kubeconfig", "bad-number", "two-namespaces", "lease-timing", "port-in-use"],
)
def test_a_bad_start_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kubeconfig_path: Path, argv: list[str], code: int, error: str
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        values = {"tmp": str(tmp_path), "kubeconfig": str(kubeconfig_path), "port": str(sock.getsockname()[1])}
        assert main(["reconcile", *(a.format(**values) for a in argv)]) == code
    err = capsys.readouterr().err
    assert err.startswith("webhook reconcile: error: " + error.format(**values))
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("env", "error"),
    [
        pytest.param({}, "no kubeconfig found: {tmp}/.kube/config does not exist and KUBECONFIG is not set (give --kubeconfig FILE, set KUBECONFIG, or run in a pod)", id="no-default-kubeconfig"),
        pytest.param({"KUBECONFIG": "{tmp}/a"}, "no kubeconfig found: KUBECONFIG names {tmp}/a, which does not exist (give --kubeconfig FILE, or run in a pod)", id="kubeconfig-variable-missing"),
        pytest.param(
            {"KUBECONFIG": "{tmp}/a:{tmp}/b"},
            "no kubeconfig found: KUBECONFIG names {tmp}/a, {tmp}/b, none of which exists (give --kubeconfig FILE, or run in a pod)",
            id="kubeconfig-variable-list-missing",
        ),
        pytest.param({"KUBECONFIG": "{tmp}/broken"}, "cannot load kubeconfig {tmp}/broken: Invalid kube-config file. Expected key current-context in {tmp}/broken", id="broken-kubeconfig"),
    ],
)
def test_without_a_usable_kubeconfig_the_line_names_the_paths_tried(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], error: str
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "broken").write_text("{}\n")
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    assert main(["reconcile"]) == 1
    assert capsys.readouterr().err == "webhook reconcile: error: " + error.format(tmp=tmp_path) + "\n"
