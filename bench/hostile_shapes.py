"""Objects made to hold the validating webhook up, sent through ``webhook serve`` at the API server's
3 MiB request limit while a probe sends ordinary reviews (issue 38, "bounded work per review").

Any user allowed to create a PodCliqueSet can send such an object through the API server. Each
shape is sent once, alone, over TLS to a fresh ``python -m webhook serve`` of this tree (default
limits); meanwhile one probe client sends Grove's e2e PodCliqueSet as CREATE reviews on a kept-alive
connection, one after another. Printed per shape: its size, the seconds to its answer, the answer's
size, the probe's p50/p99 and slowest latency while it ran, and the server's peak resident memory
(VmHWM) against the chart's 256Mi limit. The shapes:

- **names**: a PodCliqueSet-level filter naming hundreds of thousands of cliques that do not exist;
- **scopes**: hundreds of thousands of entries with a scope Grove does not know;
- **groups**: scaling groups each listing every one of a thousand cliques (a PodClique each);
- **entries**: a hundred thousand valid entries, sent as an UPDATE that changes the first.

Run: ``python bench/hostile_shapes.py [--size-mib 3]``.
"""

from __future__ import annotations

import argparse
import http.client
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import yaml

from webhook.certs import ensure

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT / "examples" / "objects" / "workload-resource-sharing.yaml"
VALIDATE = "/webhooks/validate-podcliqueset"
MiB = 1024 * 1024
LIMIT_MIB = 256
"""The chart's memory limit for the webhook container."""


def _review(obj: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None) -> bytes:
    request: dict[str, Any] = {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": "grove.io", "version": "v1alpha1", "kind": "PodCliqueSet"},
        "resource": {"group": "grove.io", "version": "v1alpha1", "resource": "podcliquesets"},
        "name": obj["metadata"]["name"], "namespace": "default", "operation": operation, "userInfo": {"username": "admin"},
        "object": obj,
    }
    if old is not None:
        request["oldObject"] = old
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


def _workload() -> dict[str, Any]:
    pcs: dict[str, Any] = next(d for d in yaml.safe_load_all(WORKLOAD.read_text()) if d and d["kind"] == "PodCliqueSet")
    pcs["metadata"]["namespace"] = "default"
    return pcs


def _base() -> dict[str, Any]:
    return {"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet", "metadata": {"name": "hostile", "namespace": "default"},
            "spec": {"replicas": 1, "template": {"cliques": [{"name": "a", "spec": {"replicas": 1}}]}}}


def _fill(size: int, one: Callable[[int], Any], make: Callable[[list[Any]], bytes], per: int) -> bytes:
    """The body ``make`` writes with as many items ``one`` makes as fit in ``size`` bytes."""
    count = max(1, size // per)
    return make([one(k) for k in range(count)])


def names(size: int) -> bytes:
    def make(items: list[Any]) -> bytes:
        pcs = _base()
        pcs["spec"]["template"]["resourceSharing"] = [{"name": "t", "scope": "AllReplicas", "filter": {"childCliqueNames": items}}]
        return _review(pcs)
    return _fill(size, lambda k: f"c{k:06d}", make, 10)


def scopes(size: int) -> bytes:
    def make(items: list[Any]) -> bytes:
        pcs = _base()
        pcs["spec"]["template"]["resourceSharing"] = items
        return _review(pcs)
    return _fill(size, lambda k: {"name": f"t{k}", "scope": "Sometimes"}, make, 38)


def groups(size: int) -> bytes:
    members = [f"c{m:03d}" for m in range(1000)]

    def make(items: list[Any]) -> bytes:
        pcs = _base()
        template = pcs["spec"]["template"]
        template["cliques"] = [{"name": m, "spec": {"replicas": 1}, "resourceSharing": [{"name": "x", "scope": "PerReplica"}]} for m in members]
        template["podCliqueScalingGroups"] = items
        return _review(pcs)
    return _fill(size, lambda k: {"name": f"g{k}", "cliqueNames": members}, make, 7_000)


def entries(size: int) -> bytes:
    def make(items: list[Any]) -> bytes:
        new, old = _base(), _base()
        new["spec"]["template"]["resourceSharing"] = items
        old["spec"]["template"]["resourceSharing"] = [{**items[0], "scope": "PerReplica"}, *items[1:]]
        return _review(new, "UPDATE", old)
    return _fill(size // 2, lambda k: {"name": f"t{k}", "scope": "AllReplicas"}, make, 36)


SHAPES = {"names": names, "scopes": scopes, "groups": groups, "entries": entries}


class Server:
    """``python -m webhook serve`` of this tree on a free port, with fresh certificates."""

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp())
        ensure(self.directory, ["localhost", "127.0.0.1"])
        self.port = 18000 + (int(time.time() * 1000) % 2000)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "webhook", "serve", "--port", str(self.port), "--objects", str(WORKLOAD),
             "--tls-cert", str(self.directory / "tls.crt"), "--tls-key", str(self.directory / "tls.key"), "--log-level", "warning"],
            cwd=ROOT,
        )
        self.context = ssl.create_default_context(cafile=str(self.directory / "ca.crt"))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if self.call("GET", "/readyz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("the server did not become ready in 30 s")

    def connection(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("localhost", self.port, context=self.context, timeout=60)

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        connection = self.connection()
        try:
            connection.request(method, path, body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def peak_mib(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


class Probe(threading.Thread):
    """Ordinary reviews one after another on one kept-alive connection, each one's latency kept."""

    def __init__(self, server: Server) -> None:
        super().__init__(daemon=True)
        self.server = server
        self.body = _review(_workload())
        self.latencies: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        connection = self.server.connection()
        while not self.done.is_set():
            started = time.perf_counter()
            connection.request("POST", VALIDATE, self.body, {"Content-Type": "application/json"})
            connection.getresponse().read()
            self.latencies.append(time.perf_counter() - started)


def measure(server: Server, body: bytes) -> tuple[float, int, list[float]]:
    probe = Probe(server)
    probe.start()
    time.sleep(0.5)  # the probe under way before the shape is sent
    started = time.perf_counter()
    status, answer = server.call("POST", VALIDATE, body)
    seconds = time.perf_counter() - started
    time.sleep(0.2)
    probe.done.set()
    probe.join()
    assert status == 200, (status, answer[:200])
    return seconds, len(answer), probe.latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=float, default=3.0, help="size of each object's review (the API server's limit: 3)")
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="only these shapes (default: all)")
    arguments = parser.parse_args()
    print(f"| shape | body | answered in | answer | probe p50 / p99 / slowest (ms) | probe reviews | peak RSS (limit {LIMIT_MIB} MiB) |")
    print("|---|---|---|---|---|---|---|")
    for name in arguments.shape or list(SHAPES):
        body = SHAPES[name](int(arguments.size_mib * MiB))
        server = Server()
        try:
            seconds, answered, latencies = measure(server, body)
            p99 = statistics.quantiles(latencies, n=100)[98] if len(latencies) >= 100 else max(latencies)
            print(
                f"| {name} | {len(body) / MiB:.1f} MiB | {seconds:.2f} s | {answered / 1024:.0f} KiB | "
                f"{statistics.median(latencies) * 1000:.1f} / {p99 * 1000:.1f} / {max(latencies) * 1000:.0f} | {len(latencies)} | "
                f"{server.peak_mib():.0f} MiB |",
                flush=True,
            )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
