"""The claim reconciler on a PodCliqueSet that needs 1,000 claims: from nothing, then after a
scale-in of half its replicas. Wall time and the API calls the reconciler made.

The API server is the tests' fake (``tests/fakeapi``), in this process; the reconciler is
``python -m webhook reconcile`` in a child process, as in a pod, so the two do not share a
Python interpreter. The PodCliqueSet's children are made (and, on scale-in, deleted) the way
Grove makes them, by the tests' Grove stand-in; the fake server's garbage collector removes the
claims of deleted children, as Kubernetes' does.

Two shapes, 1,000 claims each:

- ``levels``: 10 replicas; per replica 5 PodCliqueSet PerReplica claims, a standalone clique of 8
  pods (1 AllReplicas + 2 PerReplica entries), a scaling group of 4 (1 + 2) whose clique has 8
  pods (1 + 2); plus 10 PodCliqueSet AllReplicas claims. Scale-in: 10 -> 5 replicas; the
  reconciler deletes the PodCliqueSet-level claims of the removed replicas, the garbage collector
  the rest.
- ``flat``: 100 replicas, 10 PodCliqueSet PerReplica entries. Scale-in: 100 -> 50; the
  reconciler deletes all 500 stale claims itself.

Run: ``python bench/reconcile.py``.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from serving import machine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakeapi import FakeApiServer, wait_until  # noqa: E402
from reconciler.grove import GroveOperator  # noqa: E402

SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}


def entries(prefix: str, all_replicas: int, per_replica: int) -> list[dict[str, str]]:
    return [{"name": f"{prefix}-all-{n}", "scope": "AllReplicas"} for n in range(all_replicas)] + [
        {"name": f"{prefix}-per-{n}", "scope": "PerReplica"} for n in range(per_replica)
    ]


def podcliqueset(shape: str) -> tuple[dict[str, Any], int]:
    """The PodCliqueSet of one shape, and the replicas it starts with."""
    if shape == "flat":
        sharing, cliques, groups, replicas = entries("pcs", 0, 10), [], [], 100
    else:
        sharing, replicas = entries("pcs", 10, 5), 10
        cliques = [
            {"name": "solo", "resourceSharing": entries("solo", 1, 2), "spec": {"replicas": 8, "roleName": "solo"}},
            {"name": "member", "resourceSharing": entries("member", 1, 2), "spec": {"replicas": 8, "roleName": "member"}},
        ]
        groups = [{"name": "sg", "cliqueNames": ["member"], "replicas": 4, "resourceSharing": entries("sg", 1, 2)}]
    names = {e["name"] for e in sharing} | {e["name"] for c in cliques for e in c["resourceSharing"]}
    names |= {e["name"] for g in groups for e in g["resourceSharing"]}
    pcs = {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": {"name": f"bench-{shape}", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "template": {
                "resourceClaimTemplates": [{"name": n, "templateSpec": {"spec": SPEC}} for n in sorted(names)],
                "resourceSharing": sharing,
                "cliques": cliques,
                "podCliqueScalingGroups": groups,
            },
        },
    }
    return pcs, replicas


def claims(api: FakeApiServer) -> int:
    return len(api.list("resourceclaims", "default"))


def calls(api: FakeApiServer) -> collections.Counter[str]:
    """Requests the reconciler made, by method and resource (watches and the polls of this script
    are not requests to the server)."""
    counted: collections.Counter[str] = collections.Counter()
    for request in api.requests:
        if request.is_watch:
            continue
        resource = request.path.rstrip("/").split("/")
        plural = next((p for p in resource if p in ("resourceclaims", "events", "resourceclaimtemplates")), resource[-1])
        counted[f"{request.method} {plural}"] += 1
    return counted


def quiet(api: FakeApiServer, seconds: float = 1.5) -> None:
    """Wait until the reconciler has made no request for ``seconds``."""
    last, since = len(api.requests), time.monotonic()
    while time.monotonic() - since < seconds:
        time.sleep(0.1)
        if len(api.requests) != last:
            last, since = len(api.requests), time.monotonic()


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def phase(api: FakeApiServer, pid: int, name: str, act: Any, want: int) -> dict[str, Any]:
    api.requests.reset()
    cpu = cpu_seconds(pid)
    started = time.monotonic()
    act()
    wait_until(lambda: claims(api) == want, timeout=300, interval=0.1, message=f"{want} claims")
    elapsed = time.monotonic() - started
    quiet(api)
    return {
        "phase": name,
        "seconds": elapsed,
        "claims": claims(api),
        "calls": calls(api),
        "cpu": cpu_seconds(pid) - cpu,
    }


def run(shape: str, workers: int) -> list[dict[str, Any]]:
    with FakeApiServer() as api, tempfile.TemporaryDirectory() as tmp:
        kubeconfig = api.write_kubeconfig(Path(tmp) / "kubeconfig")
        env = {k: v for k, v in os.environ.items() if not k.startswith("WEBHOOK_")}
        child = subprocess.Popen(
            [sys.executable, "-m", "webhook", "reconcile", "--kubeconfig", str(kubeconfig), "--health-port", "0",
             "--workers", str(workers), "--log-level", "warning"],
            cwd=ROOT,
            env=env,
        )
        try:
            wait_until(lambda: api.open_watches() == 4, timeout=30, message="the reconciler watching")
            pcs, replicas = podcliqueset(shape)
            grove: dict[str, GroveOperator] = {}
            total = 1000

            def create() -> None:
                grove["op"] = GroveOperator(api, pcs)
                grove["op"].sync()

            def scale_in() -> None:
                grove["op"].scale("podcliquesets", pcs["metadata"]["name"], replicas // 2)

            left = 505 if shape == "levels" else 500
            results = [
                phase(api, child.pid, "from nothing", create, total),
                phase(api, child.pid, "scale-in of half", scale_in, left),
            ]
        finally:
            child.send_signal(signal.SIGTERM)
            child.wait(30)
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    arguments, _ = parser.parse_known_args()  # bench/run.py passes every script the same arguments
    print(f"machine: {machine()}; reconciler workers: {arguments.workers}")
    for shape in ("levels", "flat"):
        for result in run(shape, arguments.workers):
            counts = result["calls"]
            detail = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            print(
                f"{shape:6} {result['phase']:17} {result['seconds']:6.2f} s  reconciler CPU {result['cpu']:5.2f} s  "
                f"claims now {result['claims']:4}  API calls {sum(counts.values()):5}: {detail}"
            )


if __name__ == "__main__":
    main()
