"""The lock files agree with pyproject.toml: every dependency it names is locked at a version inside
its range, nothing is locked that nothing needs, every pin carries hashes, and the tests run the
versions the image ships. Read from the files alone, with no network: `make lock` mends a failure."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: How uv's annotations name the project itself as the reason for a pin.
PROJECT = f"{PYPROJECT['name']} (pyproject.toml)"


@dataclass(frozen=True)
class Pin:
    name: str
    version: Version
    marker: str
    hashes: tuple[str, ...]
    #: What asks for it, as uv's ``# via`` annotations say: the project, or locked packages.
    via: frozenset[str]


def read_lock(name: str) -> dict[str, list[Pin]]:
    """The pins of a lock written by ``uv pip compile --generate-hashes`` (annotated), by name; a
    name may be pinned more than once, under markers that part platforms or Python versions."""
    pins: dict[str, list[Pin]] = {}
    entry: list[str] = []

    def flush() -> None:
        if not entry:
            return
        text = " ".join(line.rstrip("\\").strip() for line in entry if not line.lstrip().startswith("#"))
        hashes = tuple(re.findall(r"--hash=(sha256:[0-9a-f]{64})", text))
        requirement, _, marker = re.sub(r"\s*--hash=\S+", "", text).partition(";")
        requirement, marker = requirement.strip(), marker.strip()
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", requirement)
        assert match, f"{name}: {requirement!r} is not pinned with =="
        via: set[str] = set()
        for line in entry:
            comment = line.strip().removeprefix("#").strip()
            if comment.startswith("via"):
                comment = comment.removeprefix("via").strip()
            if comment and line.lstrip().startswith("#") and not comment.startswith("-c "):
                via.add(comment if comment.startswith(PYPROJECT["name"]) else canonicalize_name(comment))
        pin = Pin(canonicalize_name(match[1]), Version(match[2]), marker, hashes, frozenset(via))
        pins.setdefault(pin.name, []).append(pin)
        entry.clear()

    for line in (ROOT / name).read_text().splitlines():
        if line and not line[0].isspace() and not line.startswith("#"):
            flush()
            entry.append(line)
        elif entry and line.strip():
            entry.append(line)
    flush()
    return pins


RUNTIME = [Requirement(r) for r in PYPROJECT["dependencies"]]
TEST = RUNTIME + [Requirement(r) for r in PYPROJECT["optional-dependencies"]["test"]]
LOCKS = {"requirements.lock": RUNTIME, "requirements-test.lock": TEST}


@pytest.mark.parametrize("lock", LOCKS)
def test_every_dependency_is_locked_inside_its_range(lock):
    pins = read_lock(lock)
    for requirement in LOCKS[lock]:
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is in pyproject.toml but not in {lock}: run `make lock`"
        for pin in pins[name]:
            assert requirement.specifier.contains(pin.version, prereleases=True), (
                f"{lock} pins {name}=={pin.version}, outside pyproject.toml's {requirement}: run `make lock`")


@pytest.mark.parametrize("lock", LOCKS)
def test_the_lock_names_as_the_project_s_own_exactly_the_dependencies_of_pyproject(lock):
    locked = {name for name, pins in read_lock(lock).items() if any(PROJECT in pin.via for pin in pins)}
    wanted = {canonicalize_name(r.name) for r in LOCKS[lock]}
    assert locked == wanted, (f"{lock} was made from other dependencies than pyproject.toml's (only in "
                              f"pyproject.toml: {sorted(wanted - locked)}, only in the lock: "
                              f"{sorted(locked - wanted)}): run `make lock`")


@pytest.mark.parametrize("lock", LOCKS)
def test_everything_locked_is_needed_by_the_project_or_by_something_locked(lock):
    pins = read_lock(lock)
    for name, entries in pins.items():
        for pin in entries:
            assert pin.via, f"{lock}: nothing asks for {name} (annotations missing?)"
            assert all(reason == PROJECT or reason in pins for reason in pin.via), (
                f"{lock}: {name} is there for {sorted(pin.via)}, not all of which are locked: run `make lock`")


@pytest.mark.parametrize("lock", [*LOCKS, "requirements-helm.lock"])
def test_every_pin_carries_hashes_so_pip_can_require_them(lock):
    pins = read_lock(lock)
    assert pins
    for name, entries in pins.items():
        for pin in entries:
            assert pin.hashes, f"{lock}: {name}=={pin.version} has no hash"


def test_the_tests_run_the_versions_the_image_ships():
    runtime, test = read_lock("requirements.lock"), read_lock("requirements-test.lock")
    for name, pins in runtime.items():
        assert name in test, name
        assert {(p.version, p.marker) for p in pins} == {(p.version, p.marker) for p in test[name]}, name


def test_helm_sdkpy_is_locked_at_the_makefile_s_version_alone():
    (pinned,) = re.findall(r"^HELM_SDKPY := (\S+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    requirement = Requirement(pinned)
    pins = read_lock("requirements-helm.lock")
    assert list(pins) == [canonicalize_name(requirement.name)], "run `make lock`"
    (pin,) = pins[canonicalize_name(requirement.name)]
    assert requirement.specifier.contains(pin.version, prereleases=True), "run `make lock`"


def test_the_image_and_make_install_from_the_locks_and_the_project_without_dependencies():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install --no-compile --require-hashes -r requirements.lock" in dockerfile
    assert re.search(r"pip install [^\n]*--no-deps \.", dockerfile)
    makefile = (ROOT / "Makefile").read_text()
    for lock in [*LOCKS, "requirements-helm.lock"]:
        assert re.search(rf"pip install [^\n]*--require-hashes [^\n]*-r {re.escape(lock)}\n", makefile), lock
    assert "pip install --quiet --no-deps -e ." in makefile
