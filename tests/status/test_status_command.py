"""``webhook status`` as a user meets its errors: each one line and exit 2, naming what to fix; the
context given with ``--context`` is the one used; usage names the program as it was run."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from webhook.cli import main


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def kubeconfig(tmp_path: Path, ports: dict[str, int], current: str) -> Path:
    """A kubeconfig with a context per entry of ``ports``, each a server on 127.0.0.1 that is not there."""
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": current,
        "clusters": [{"name": n, "cluster": {"server": f"https://127.0.0.1:{p}", "insecure-skip-tls-verify": True}} for n, p in ports.items()],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": n, "context": {"cluster": n, "user": "u", "namespace": f"ns-{n}"}} for n in ports],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["status", *argv])
    captured = capsys.readouterr()
    assert captured.out == ""
    return code, captured.err


def test_an_unreachable_api_server_is_one_line_naming_the_context_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ports = {"here": closed_port(), "there": closed_port()}
    path = kubeconfig(tmp_path, ports, "here")
    code, err = run(capsys, "--kubeconfig", str(path), "--context", "there")
    assert code == 2
    assert err.startswith("webhook status: error: cannot connect to the API server: "), err
    assert err.endswith(f" (at https://127.0.0.1:{ports['there']})\n") and err.count("\n") == 1


def test_a_missing_kubeconfig_and_contradicting_options_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--kubeconfig", str(tmp_path / "none")) == (
        2, f"webhook status: error: cannot load kubeconfig {tmp_path / 'none'}: no such file\n")
    code, err = run(capsys, "-A", "-n", "team-a")
    assert (code, err) == (2, "webhook status: error: --all-namespaces and --namespace cannot be given together\n")


def test_usage_names_the_program_as_it_was_run() -> None:
    done = subprocess.run([sys.executable, "-m", "webhook", "status", "--bogus"], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert done.stderr == "python -m webhook status: error: unrecognized arguments: --bogus (see 'python -m webhook status --help')\n"
    usage = subprocess.run([sys.executable, "-m", "webhook", "status", "--help"], capture_output=True, text=True, check=True)
    assert usage.stdout.startswith("usage: python -m webhook status [-h]")
