"""What the node tier needs of the machine, and what it makes on it and takes away again: a network
namespace of its own, cgroups under a root of its own, and whatever kubelet and containerd mounted
under the tier's directory.

The tier runs where it can: as root, with ``ip netns`` and ``nsenter``, Go (for the pause image),
the control plane ``make controlplane`` builds (kubelet included) and Debian's containerd, runc,
CNI plugins, podman and mmdebstrap, which it installs with apt-get when they are missing. Anywhere
else ``requirements`` says in one line why not.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

PACKAGES = {
    # Debian package: a file it installs that shows it is there.
    "containerd": "/usr/bin/containerd",
    "runc": "/usr/sbin/runc",
    "containernetworking-plugins": "/usr/lib/cni/bridge",
    "podman": "/usr/bin/podman",
    "mmdebstrap": "/usr/bin/mmdebstrap",
}
CNI_BIN = Path("/usr/lib/cni")
APT_TIMEOUT = 600
T = TypeVar("T")


class Unavailable(Exception):
    """Why the tier cannot run here, in one line."""


def missing_packages() -> list[str]:
    return [name for name, path in PACKAGES.items() if not Path(path).exists()]


def install_packages(log: Path) -> None:
    """apt-get installs the Debian packages the tier needs that are missing (non-interactively),
    updating the package lists once if the first attempt fails, as shared/perf/compare.sh does."""
    missing = missing_packages()
    if not missing:
        return
    if shutil.which("apt-get") is None:
        raise Unavailable(f"{', '.join(missing)} missing and no apt-get to install them")
    env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", *missing]
    with log.open("ab") as output:
        if subprocess.run(install, stdout=output, stderr=subprocess.STDOUT, env=env, timeout=APT_TIMEOUT).returncode:
            subprocess.run(["apt-get", "update"], stdout=output, stderr=subprocess.STDOUT, env=env, timeout=APT_TIMEOUT)
            subprocess.run(install, stdout=output, stderr=subprocess.STDOUT, env=env, timeout=APT_TIMEOUT)
    still = missing_packages()
    if still:
        raise Unavailable(f"apt-get could not install {', '.join(still)} (see {log})")


def requirements(assets: Path | None) -> None:
    """Raises ``Unavailable`` saying what is missing, in one line; installs missing packages."""
    if os.geteuid() != 0:
        raise Unavailable("needs root (network namespaces, cgroups, mounts)")
    for tool in ("ip", "nsenter", "go"):
        if shutil.which(tool) is None:
            raise Unavailable(f"needs {tool} on PATH")
    if assets is None:
        raise Unavailable("no control plane binaries: install Go and run 'make controlplane'")
    lacking = [name for name in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kubelet", "helm")
               if not (assets / name).is_file()]
    if lacking:
        raise Unavailable(f"KUBEBUILDER_ASSETS={assets} lacks {', '.join(lacking)}: run 'make controlplane'")
    if not Path("/sys/fs/cgroup").is_dir():
        raise Unavailable("no cgroup filesystem at /sys/fs/cgroup")
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    install_packages(cache / "apt.log")


def cache_dir() -> Path:
    """Images and the base image's root filesystem, kept across runs outside the repository, beside
    the control plane's cache."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "grove-sharing-webhook" / "node"


def run(*command: str | Path, timeout: float = 120, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=timeout, input=input)
    if check and done.returncode:
        raise RuntimeError(f"{' '.join(map(str, command))} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done


# --- the network namespace ---------------------------------------------------------------------

CLONE_NEWNET = 0x40000000
NETNS_DIR = Path("/run/netns")
CNI_RESULTS = Path("/var/lib/cni/results")
NODE_IP, PEER_IP = "10.213.0.1", "10.213.0.2"
"""The node's address and the other end of its veth pair, both inside the namespace: the node
needs an interface with an address besides loopback, and nothing is routed out of the namespace."""
SERVICE_IP = "10.0.0.1"
"""The ``kubernetes`` Service's address (first of ``--service-cluster-ip-range``): pods reach the
API server there, an address of the namespace's loopback, without kube-proxy."""
POD_CIDR = "10.214.0.0/24"


class NetworkNamespace:
    """``ip netns add`` of a namespace of the tier's own, with a veth pair whose ends are both in
    it; processes are started in it with ``nsenter --net`` (``ip netns exec`` would also give them
    a mount namespace of their own, which hides kubelet's volume mounts from runc)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.path = NETNS_DIR / name

    def create(self) -> None:
        run("ip", "netns", "add", self.name)
        inside = ("ip", "-n", self.name)
        run(*inside, "link", "set", "lo", "up")
        run(*inside, "link", "add", "gsw0", "type", "veth", "peer", "name", "gsw1")
        run(*inside, "addr", "add", f"{NODE_IP}/24", "dev", "gsw0")
        run(*inside, "addr", "add", f"{PEER_IP}/24", "dev", "gsw1")
        run(*inside, "link", "set", "gsw0", "up")
        run(*inside, "link", "set", "gsw1", "up")
        run(*inside, "route", "add", "default", "via", PEER_IP, "dev", "gsw0")
        run(*inside, "addr", "add", f"{SERVICE_IP}/32", "dev", "lo")

    def command(self, *command: str | Path) -> list[str]:
        return ["nsenter", f"--net={self.path}", "--", *map(str, command)]

    def delete(self) -> None:
        if self.path.exists():
            run("ip", "netns", "delete", self.name, check=False)

    def call(self, function: Callable[[], T]) -> T:
        """``function()`` run on a thread that has entered the namespace: sockets it creates
        belong to the namespace (and stay there when used from other threads)."""
        result: list[T] = []
        errors: list[BaseException] = []

        def entered() -> None:
            try:
                enter(self.path)
                result.append(function())
            except BaseException as err:  # handed to the caller
                errors.append(err)

        thread = threading.Thread(target=entered)
        thread.start()
        thread.join()
        if errors:
            raise errors[0]
        return result[0]


def enter(path: Path) -> None:
    """The calling thread enters the network namespace at ``path``."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {path}")
    finally:
        os.close(fd)


# --- cgroups -----------------------------------------------------------------------------------

def cgroup_hierarchies() -> list[Path]:
    """The mount points of every cgroup hierarchy (v1 controllers and the unified one)."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        kind = fields[fields.index("-") + 1]
        if kind in ("cgroup", "cgroup2"):
            found.append(Path(fields[4]))
    return found


class CgroupRoot:
    """A cgroup of the tier's own in every hierarchy, kubelet's ``cgroupRoot``: kubelet makes its
    ``kubepods`` tree under it, so nothing of it mixes with another kubelet's, and all of it is
    removed at the end."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.paths = [hierarchy / name for hierarchy in cgroup_hierarchies()]

    def create(self) -> None:
        for path in self.paths:
            path.mkdir(exist_ok=True)
            for knob in ("cpuset.cpus", "cpuset.mems"):  # a v1 cpuset starts empty: take the parent's
                if (path / knob).exists() and not (path / knob).read_text().strip():
                    (path / knob).write_text((path.parent / knob).read_text())

    def remove(self, deadline: float = 30) -> list[str]:
        """Removes the tree, deepest first, once no process is left in it; what could not go."""
        left: list[str] = []
        end = time.monotonic() + deadline
        for root in self.paths:
            if not root.exists():
                continue
            for directory in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True) + [root]:
                while True:
                    try:
                        directory.rmdir()
                        break
                    except FileNotFoundError:
                        break
                    except OSError:
                        if time.monotonic() > end:
                            left.append(str(directory))
                            break
                        time.sleep(0.1)
        return left


# --- what a killed run left ----------------------------------------------------------------------

def netns_in_use(name: str) -> bool:
    return bool(run("ip", "netns", "pids", name, check=False).stdout.strip())


def remove_stale(prefix: str, network: str) -> list[str]:
    """What runs of the tier killed before their end left behind (they could not take it away):
    each network namespace ``<prefix><pid>`` whose pid has ended and where nothing runs, with its
    cgroups; then, when no run is left alive, the network namespaces of their pods' sandboxes
    (named in the CNI results of ``network``) where nothing runs, and those results. What was
    removed, by name."""
    removed: list[str] = []
    alive = False
    for path in sorted(NETNS_DIR.glob(f"{prefix}*")):
        pid = path.name.removeprefix(prefix)
        if (pid.isdigit() and Path(f"/proc/{pid}").exists()) or netns_in_use(path.name):
            alive = True
            continue
        run("ip", "netns", "delete", path.name, check=False)
        CgroupRoot(path.name).remove(deadline=2)
        removed.append(path.name)
    if alive or not CNI_RESULTS.is_dir():
        return removed
    for result in sorted(CNI_RESULTS.glob(f"{network}-*")):
        try:
            interfaces = json.loads(result.read_text())["result"].get("interfaces", [])
        except (OSError, ValueError, KeyError, AttributeError):
            continue
        sandboxes = {Path(i["sandbox"]).name for i in interfaces if i.get("sandbox")}
        if any((NETNS_DIR / name).exists() and netns_in_use(name) for name in sandboxes):
            continue
        for name in sandboxes:
            if (NETNS_DIR / name).exists():
                run("ip", "netns", "delete", name, check=False)
                removed.append(name)
        container = result.name.removeprefix(f"{network}-").rpartition("-")[0]
        for cached in (result, CNI_RESULTS / f"cni-loopback-{container}-lo"):
            cached.unlink(missing_ok=True)
    return removed


# --- mounts ------------------------------------------------------------------------------------

def mounts_under(directory: Path) -> list[str]:
    """Mount points at or under ``directory``, deepest last."""
    prefix = str(directory.resolve())
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point == prefix or point.startswith(prefix + "/"):
            points.append(point)
    return points


def unmount_under(directory: Path) -> None:
    for point in reversed(mounts_under(directory)):
        run("umount", "--lazy", point, check=False)


def kill_processes_using(marker: str) -> list[int]:
    """Kills, by pid, the processes whose command line names ``marker`` (a path of the tier's own
    directory, e.g. containerd's socket that every shim it started is told): what outlives its
    parent, as containerd's shims do."""
    killed = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            try:
                os.kill(int(entry.name), 9)
                killed.append(int(entry.name))
            except ProcessLookupError:
                pass
    return killed

