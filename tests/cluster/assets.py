"""Where the control plane's binaries come from, as envtest names them.

``KUBEBUILDER_ASSETS`` names a directory holding ``etcd``, ``kube-apiserver`` and ``kubectl``
(what ``setup-envtest use`` prints), optionally with ``kube-controller-manager``,
``kube-scheduler`` and ``helm``. ``make test`` sets it to the cache ``make controlplane`` builds
from the Kubernetes Go modules when it is not set and Go is there. ``helm`` may also come from PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REQUIRED = ("etcd", "kube-apiserver", "kubectl")
HOW = (
    "set KUBEBUILDER_ASSETS to a directory of etcd, kube-apiserver and kubectl "
    "(e.g. from setup-envtest), or install Go and run 'make controlplane'"
)


class Unavailable(Exception):
    """Why the tier cannot run here, in one line."""


@dataclass(frozen=True)
class Assets:
    directory: Path

    @classmethod
    def find(cls) -> Assets:
        named = os.environ.get("KUBEBUILDER_ASSETS")
        if not named:
            raise Unavailable(f"no control plane binaries: {HOW}")
        directory = Path(named)
        missing = [name for name in REQUIRED if not (directory / name).is_file()]
        if missing:
            raise Unavailable(f"KUBEBUILDER_ASSETS={named} lacks {', '.join(missing)}: {HOW}")
        return cls(directory)

    def has(self, name: str) -> bool:
        return (self.directory / name).is_file()

    def binary(self, name: str) -> Path:
        path = self.directory / name
        if path.is_file():
            return path
        found = shutil.which(name) if name == "helm" else None
        if found is None:
            raise Unavailable(f"{name} is not in KUBEBUILDER_ASSETS={self.directory}")
        return Path(found)

    def feature_gates(self) -> dict[str, str]:
        """The alpha and beta feature gates kube-apiserver accepts, with their stage."""
        output = subprocess.run([self.binary("kube-apiserver"), "--help"], capture_output=True, text=True).stdout
        return dict(re.findall(r"(?:kube:)?(\w+)=true\|false \((ALPHA|BETA) - default", output))

    def kubernetes_version(self) -> str:
        """``v1.37.2``, as ``kube-apiserver --version`` prints it."""
        output = subprocess.run([self.binary("kube-apiserver"), "--version"], capture_output=True, text=True, check=True)
        match = re.search(r"v\d+\.\d+\.\d+\S*", output.stdout)
        return match.group(0) if match else output.stdout.strip()
