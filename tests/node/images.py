"""The images the node runs, made here and kept in the tier's cache (``host.cache_dir``) keyed by
what each is made from, so that a warm run only imports them into its containerd:

- **pause**, the pods' sandbox: a static Go program that sleeps until it is signalled;
- **a Python base** made of Debian's packages with mmdebstrap (python3, python3-venv,
  python-is-python3, pip, setuptools and wheel from Debian's ``*-whl`` packages, Debian's
  EXTERNALLY-MANAGED marker removed), which the official ``python`` image's place takes where no
  registry but Debian's and PyPI can be reached; ``NODE_PYTHON_IMAGE`` names another to use instead;
- **the project's image**, built from the Dockerfile as it is (``PYTHON_IMAGE`` set to that base)
  and tagged as the README's build tags it, ``registry.example.com/grove-sharing-webhook:<appVersion>``,
  so the README's ``helm install`` finds it on the node as written.

podman builds them (runc, the host's network, the open-files limit this process has, the
machine's CA bundle mounted for pip's downloads), with its storage in the tier's directory.
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from node.host import run, unmount_under

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "grove-sharing-webhook"
REPOSITORY = "registry.example.com/grove-sharing-webhook"
"""The README's image repository, as its ``docker build -t`` names it."""
BASE_PACKAGES = ("python3", "python3-venv", "python-is-python3", "python3-pip-whl", "python3-setuptools-whl",
                 "python3-wheel-whl", "ca-certificates")
BASE_SUITE = "bookworm"
BASE_HOOK = """#!/bin/sh
# mmdebstrap's customize hook: $1 is the root of the image being made. pip, setuptools and wheel are
# installed from Debian's wheels, as the official image has them, once Debian's marker that
# refuses installs outside a virtual environment is gone.
set -eu
rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED
chroot "$1" sh -ec 'pip=$(ls /usr/share/python-wheels/pip-*.whl); python3 "$pip/pip" install --quiet --no-index --no-cache-dir --find-links /usr/share/python-wheels pip setuptools wheel'
"""
PAUSE = """package main

// The pods' sandbox: holds their namespaces and sleeps until told to stop.
import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
"""
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
BUILD_TIMEOUT = 900


def app_version() -> str:
    return str(yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"])


def digest(*parts: bytes) -> str:
    hashed = hashlib.sha256()
    for part in parts:
        hashed.update(len(part).to_bytes(8, "big") + part)
    return hashed.hexdigest()[:16]


def context_files() -> list[Path]:
    """The files of the build context the Dockerfile copies (its .dockerignore lets only these in)."""
    files = [ROOT / "Dockerfile", ROOT / ".dockerignore", ROOT / "pyproject.toml", ROOT / "requirements.lock", ROOT / "README.md"]
    files += sorted(p for p in (ROOT / "webhook").rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    return files


@dataclass
class Images:
    cache: Path
    workdir: Path
    log: Path
    built: list[str] = field(default_factory=list)
    """What had to be made this run (the rest came from the cache)."""

    def __post_init__(self) -> None:
        self.cache.mkdir(parents=True, exist_ok=True)
        self.project = f"{REPOSITORY}:{app_version()}"
        self.pause = ""

    # --- podman, with storage of its own in the tier's directory ---------------------------------

    def podman(self, *args: str, timeout: float = BUILD_TIMEOUT) -> None:
        storage = self.workdir / "podman"
        command = ["podman", "--root", str(storage / "root"), "--runroot", str(storage / "run"),
                   "--cgroup-manager", "cgroupfs", "--events-backend", "none", "--storage-driver", "overlay", *args]
        with self.log.open("ab") as output:
            output.write(f"--- {' '.join(command)}\n".encode())
            output.flush()
            done = subprocess.run(command, stdout=output, stderr=subprocess.STDOUT, timeout=timeout)
        if done.returncode:
            raise RuntimeError(f"podman {' '.join(args[:2])} exited {done.returncode}; see {self.log}")

    def build(self, tag: str, context: Path, dockerfile: Path, *extra: str) -> None:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        # Root here may not raise its limits (no CAP_SYS_RESOURCE): the build keeps this process's.
        options = ["--runtime", "runc", "--network", "host", "--ulimit", f"nofile={soft}:{hard}"]
        if CA_BUNDLE.is_file():
            # pip's downloads trust what this machine trusts; nothing of it goes into the image.
            options += ["--volume", f"{CA_BUNDLE}:{CA_BUNDLE}:ro"]
        self.podman("build", *options, *extra, "-t", tag, "-f", str(dockerfile), str(context))

    def archive(self, name: str, key: str, make: Callable[[Path], None]) -> Path:
        """The cached archive ``name-key.tar``, made by ``make(path)`` when it is not there."""
        path = self.cache / f"{name}-{key}.tar"
        if path.is_file():
            return path
        for stale in self.cache.glob(f"{name}-*.tar"):
            stale.unlink()
        partial = path.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        make(partial)
        partial.rename(path)
        self.built.append(name)
        return path

    # --- the three images ---------------------------------------------------------------------------

    def pause_archive(self) -> Path:
        go = subprocess.run(["go", "version"], capture_output=True, text=True, check=True).stdout
        key = digest(PAUSE.encode(), go.encode())
        self.pause = f"localhost/grove-sharing-webhook-node/pause:{key}"

        def make(path: Path) -> None:
            source = self.workdir / "pause"
            source.mkdir(exist_ok=True)
            (source / "main.go").write_text(PAUSE)
            (source / "go.mod").write_text("module pause\n\ngo 1.21\n")
            env = os.environ | {"CGO_ENABLED": "0", "GOFLAGS": "-buildvcs=false", "GOTOOLCHAIN": "local"}
            subprocess.run(["go", "build", "-trimpath", "-ldflags", "-s -w", "-o", "pause", "."], cwd=source, env=env,
                           check=True, capture_output=True)
            (source / "Containerfile").write_text('FROM scratch\nCOPY pause /pause\nENTRYPOINT ["/pause"]\n')
            self.build(self.pause, source, source / "Containerfile")
            self.podman("save", "--format", "docker-archive", "-o", str(path), self.pause)

        return self.archive("pause", key, make)

    def base_image(self) -> tuple[str, str]:
        """The Python image the Dockerfile builds on (its name, and a key of what it is), in podman's
        storage: ``NODE_PYTHON_IMAGE``, pulled, or the Debian base, made or taken from the cache."""
        named = os.environ.get("NODE_PYTHON_IMAGE")
        if named:
            self.podman("pull", named)
            return named, named
        key = digest(BASE_SUITE.encode(), " ".join(BASE_PACKAGES).encode(), BASE_HOOK.encode())

        def make(path: Path) -> None:
            hook = self.workdir / "base-hook.sh"
            hook.write_text(BASE_HOOK)
            hook.chmod(0o755)
            excluded = [f"--dpkgopt=path-exclude=/usr/share/{d}/*" for d in ("doc", "man", "locale", "info")]
            command = ["mmdebstrap", "--variant=essential", f"--include={','.join(BASE_PACKAGES)}", *excluded,
                       f'--customize-hook={hook} "$1"', "--format=tar", BASE_SUITE, str(path)]
            with self.log.open("ab") as output:
                output.write(f"--- {' '.join(command)}\n".encode())
                output.flush()
                if subprocess.run(command, stdout=output, stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT).returncode:
                    raise RuntimeError(f"mmdebstrap failed; see {self.log}")

        rootfs = self.archive("python-base", key, make)
        name = f"localhost/grove-sharing-webhook-node/python:{key}"
        self.podman("import", "--change", 'CMD ["python3"]', str(rootfs), name)
        return name, key

    def project_archive(self) -> Path:
        files = context_files()
        parts = [str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes() for p in files]
        named = os.environ.get("NODE_PYTHON_IMAGE", "")
        base_key = named or digest(BASE_SUITE.encode(), " ".join(BASE_PACKAGES).encode(), BASE_HOOK.encode())
        key = digest(base_key.encode(), self.project.encode(), *parts)

        def make(path: Path) -> None:
            base, _ = self.base_image()
            self.build(self.project, ROOT, ROOT / "Dockerfile", "--build-arg", f"PYTHON_IMAGE={base}")
            self.podman("save", "--format", "docker-archive", "-o", str(path), self.project)

        return self.archive("webhook", key, make)

    def clean(self) -> None:
        """podman's storage of this run (its overlay mounts are gone once each command has ended)."""
        storage = self.workdir / "podman"
        if storage.exists():
            unmount_under(storage)
            shutil.rmtree(storage, ignore_errors=True)

