"""kubectl and helm as a user runs them: the binaries of the tier's assets, a kubeconfig, and
Helm's state kept in the tier's directory rather than the user's home."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 120.0


@dataclass(frozen=True)
class Tool:
    binary: Path
    kubeconfig: Path
    home: Path

    def __call__(self, *args: str, input: str | None = None, check: bool = True, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home),
            "KUBECONFIG": str(self.kubeconfig),
            "HELM_CACHE_HOME": str(self.home / "helm-cache"),
            "HELM_CONFIG_HOME": str(self.home / "helm-config"),
            "HELM_DATA_HOME": str(self.home / "helm-data"),
        }
        done = subprocess.run([str(self.binary), *args], input=input, capture_output=True, text=True, env=env, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"{self.binary.name} {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
        return done

    def as_user(self, kubeconfig: Path) -> Tool:
        return Tool(self.binary, kubeconfig, self.home)
