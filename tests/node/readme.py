"""The README's install, "Check that it works" and uninstall commands, taken from README.md itself
(so the README cannot drift from what the tier runs) and run as written with bash, in a directory
of the test's own that holds the repository's ``charts``, ``examples`` and ``.venv`` (the
``certs`` command writes ``cluster-certs`` there, not into the repository).

The image the README's build tags, ``registry.example.com/grove-sharing-webhook:<appVersion>``, is
already on the node, so its ``--set image.repository=...`` is kept as it is. Where a test adds
values (``--set reconciler.mode=deployment``...), they are appended to the README's ``helm install``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
TIMEOUT = 240.0


def section(title: str) -> str:
    """The text of the README's section ``### title``, up to the next heading of its level or above."""
    start = README.index(f"\n### {title}\n")
    end = re.compile(r"\n##+ ").search(README, start + 1)
    return README[start: end.start() if end else len(README)]


def blocks(text: str, language: str = "sh") -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def install(mode: str) -> str:
    """The README's install commands for certificate ``mode``: controller (the default) and
    existingSecret as shown; selfSigned is the controller's command with the ``--set`` the README
    names."""
    text = section("Install, with one of four certificate modes")
    if mode in ("controller", "selfSigned"):
        command = blocks(text.partition("**controller**")[2])[0].rstrip()
        if mode == "selfSigned":
            assert "`--set certificates.mode=selfSigned`" in text, "the README no longer names the selfSigned value"
            command += " \\\n  --set certificates.mode=selfSigned"
        return command + "\n"
    if mode == "existingSecret":
        return blocks(text.partition("**existingSecret**")[2])[0]
    raise ValueError(mode)


def with_values(commands: str, *values: str) -> str:
    """``commands`` with ``values`` (``--set a=b`` ...) appended to its ``helm install``."""
    lines = commands.rstrip().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("helm install "))
    end = start
    while lines[end].endswith("\\"):
        end += 1
    lines[end] += " \\\n  " + " ".join(values)
    return "\n".join(lines) + "\n"


def checks() -> list[str]:
    """The three command blocks of "Check that it works": both pods ready and both configurations
    there; the dry run of a denied PodCliqueSet; Grove's end-to-end workload."""
    found = blocks(section("Check that it works"))
    assert len(found) == 3, "the README's checks are not the three blocks this tier runs"
    return found


def denial() -> str:
    """The error the README shows for its dry run, as one line."""
    block = README.partition("| kubectl apply --dry-run=server -f -\n")[2].partition("```")[0]
    return " ".join(line.removeprefix("# ") for line in block.strip().splitlines())


def uninstall() -> str:
    (block,) = blocks(section("Uninstall"))
    return block


@dataclass(frozen=True)
class Shell:
    """bash with the tier's kubectl and helm first on PATH, its kubeconfig and a home of its own."""

    assets: Path
    kubeconfig: Path
    home: Path

    def __post_init__(self) -> None:
        work = self.home / "work"
        work.mkdir(parents=True, exist_ok=True)
        for name in ("charts", "examples"):
            if not (work / name).exists():
                (work / name).symlink_to(ROOT / name)
        if not (work / ".venv").exists():  # the README's .venv/bin/python: this suite's interpreter's
            (work / ".venv").symlink_to(Path(sys.prefix))

    @property
    def cwd(self) -> Path:
        return self.home / "work"

    def __call__(self, script: str, check: bool = True, timeout: float = TIMEOUT, errexit: bool = True) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": f"{self.assets}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "KUBECONFIG": str(self.kubeconfig),
            "HELM_CACHE_HOME": str(self.home / "helm-cache"),
            "HELM_CONFIG_HOME": str(self.home / "helm-config"),
            "HELM_DATA_HOME": str(self.home / "helm-data"),
        }
        done = subprocess.run(["bash", "-e" if errexit else "+e", "-o", "pipefail", "-c", script], cwd=self.cwd, env=env, capture_output=True,
                              text=True, timeout=timeout)
        if check and done.returncode:
            raise AssertionError(f"exited {done.returncode}:\n$ {script}\n{done.stdout}{done.stderr}")
        return done
