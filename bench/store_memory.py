"""Memory and start-up time of ``webhook serve`` with N realistic PodCliqueSets in its object store.

Each PodCliqueSet is about 21 KB of JSON, as a model-serving stack writes one: 8 cliques (4
standalone, 4 in 2 scaling groups) with full pod specs (two containers with environment, probes,
resources and mounts, an init container, affinity, tolerations, volumes), 4 internal claim
templates, and resource-sharing entries at every level (4 on the PodCliqueSet, 2 of them
filtered; 2 per scaling group, one filtered; 1 per clique). They are spread over 20 namespaces.

Two sources, each measured on the real server process (``python -m webhook serve``):

- **files**: one JSON file per PodCliqueSet (YAML with ``--form yaml``), read by the embedded store
  (``--objects DIR``);
- **cluster**: the tests' fake API server (``tests/fakeapi``) holding the same objects, in a
  process of its own so that its memory is not counted, read by the cluster store
  (``--kubeconfig``), which lists them (in pages, when the store asks for pages) and watches.

Printed per source and N: the server's resident memory once ``/readyz`` answers 200 (VmRSS), its
peak (VmHWM), and the seconds from starting the process to ``/readyz`` 200; the median of
``--runs`` runs. Run: ``python bench/store_memory.py [--n 1000 10000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import os
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import yaml
from serving import heading
from validate import pod_spec

from webhook.certs import ensure

ROOT = Path(__file__).resolve().parents[1]
NAMESPACES = 20
STANDALONE = ("frontend", "router", "prefill", "decode")
GROUPS = {"sga": ("worker-a", "leader-a"), "sgb": ("worker-b", "leader-b")}
TEMPLATES = 4


def _template(i: int) -> dict[str, Any]:
    exactly = {"deviceClassName": "gpu.nvidia.com", "count": 2, "selectors": [{"cel": {"expression": f"device.attributes['gpu.nvidia.com'].index == {i}"}}]}
    return {
        "name": f"gpu-tpl-{i}",
        "templateSpec": {
            "metadata": {"labels": {"team": "inference"}},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}],
                                 "config": [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {"sharing": {"strategy": "MPS"}}}}]}},
        },
    }


def _clique(name: str, index: int, n: int) -> dict[str, Any]:
    spec = pod_spec(name)
    spec["containers"][0]["image"] = f"nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.{n % 7}"
    spec["containers"][0]["env"][0]["value"] = f"llm-{n:05d}"
    return {
        "name": name,
        "labels": {"kai.scheduler/queue": f"queue-{n % 5}"},
        "annotations": {"example.com/owner": f"team-{n % NAMESPACES:02d}"},
        "resourceSharing": [{"name": f"gpu-tpl-{index % TEMPLATES}", "scope": "PerReplica" if index % 2 else "AllReplicas"}],
        "spec": {"roleName": name, "replicas": 2, "minAvailable": 1, "podSpec": spec},
    }


def podcliqueset(n: int) -> dict[str, Any]:
    """The n-th PodCliqueSet: same shape for every n, its own name, namespace, uid and a few values."""
    members = [name for names in GROUPS.values() for name in names]
    cliques = [_clique(name, i, n) for i, name in enumerate([*STANDALONE, *members])]
    groups = [
        {
            "name": group,
            "cliqueNames": list(names),
            "replicas": 2,
            "minAvailable": 1,
            "resourceSharing": [
                {"name": "gpu-tpl-0", "scope": "AllReplicas"},
                {"name": f"nvlink-{group}", "namespace": "shared", "scope": "PerReplica", "filter": {"childCliqueNames": [names[0]]}},
            ],
        }
        for group, names in GROUPS.items()
    ]
    sharing = [
        {"name": "gpu-tpl-1", "scope": "AllReplicas"},
        {"name": "gpu-tpl-2", "scope": "PerReplica"},
        {"name": "gpu-tpl-3", "scope": "PerReplica", "filter": {"childCliqueNames": ["prefill", "decode"]}},
        {"name": "fabric", "namespace": "shared", "scope": "AllReplicas", "filter": {"childScalingGroupNames": ["sga"]}},
    ]
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": {
            "name": f"llm-{n:05d}",
            "namespace": f"team-{n % NAMESPACES:02d}",
            "uid": f"6f1c9a52-{n:04x}-4b7e-9d2a-{n:012x}",
            "labels": {"app.kubernetes.io/name": "llm", "app.kubernetes.io/instance": f"llm-{n:05d}"},
            "annotations": {"example.com/model": "meta-llama/Llama-3.1-70B-Instruct"},
        },
        "spec": {
            "replicas": 2,
            "template": {
                "cliqueStartupType": "CliqueStartupTypeAnyOrder",
                "terminationDelay": "4h",
                "resourceClaimTemplates": [_template(i) for i in range(TEMPLATES)],
                "resourceSharing": sharing,
                "cliques": cliques,
                "podCliqueScalingGroups": groups,
            },
        },
    }


def write_files(directory: Path, n: int, form: str = "json") -> None:
    """One JSON (or YAML) file per PodCliqueSet."""
    for i in range(n):
        obj = podcliqueset(i)
        if form == "json":
            (directory / f"pcs-{i:05d}.json").write_bytes(orjson.dumps(obj))
        else:
            (directory / f"pcs-{i:05d}.yaml").write_text(yaml.safe_dump(obj))


def fake_api(n: int, kubeconfig: Path) -> None:
    """Child process: the fake API server holding n PodCliqueSets, until standard input closes."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fakeapi import FakeApiServer

    with FakeApiServer() as api:
        for i in range(n):
            api.create(podcliqueset(i))
        api.write_kubeconfig(kubeconfig)
        print("ready", flush=True)
        sys.stdin.read()


def _status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


def _ready(url: str, context: ssl.SSLContext) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/readyz", context=context, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def serve_once(certs: Path, store_args: list[str], deadline: float = 600.0) -> tuple[float, float, float]:
    """Starts ``webhook serve`` with ``store_args``: (seconds to ready, RSS MiB, peak RSS MiB)."""
    with tempfile.TemporaryDirectory() as directory:
        port = _free_port()
        command = [sys.executable, "-m", "webhook", "serve", "--port", str(port), "--tls-cert", str(certs / "tls.crt"),
                   "--tls-key", str(certs / "tls.key"), "--log-level", "warning", *store_args]
        env = {k: v for k, v in os.environ.items() if not k.startswith("WEBHOOK_") and k != "KUBERNETES_SERVICE_HOST"}
        log = Path(directory) / "server.log"
        context = ssl.create_default_context(cafile=certs / "ca.crt")
        with log.open("wb") as output:
            started = time.monotonic()
            process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        try:
            while not _ready(f"https://127.0.0.1:{port}", context):
                if process.poll() is not None or time.monotonic() - started > deadline:
                    raise RuntimeError(f"the server did not become ready: {log.read_text()[-2000:]}")
                time.sleep(0.05)
            seconds = time.monotonic() - started
            time.sleep(1.0)  # let the loop settle (gc.freeze, the watch started) before reading memory
            status = _status(process.pid)
            return seconds, status["VmRSS"] / 1024, status["VmHWM"] / 1024
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def median_runs(runs: int, run: Any) -> tuple[float, float, float]:
    results = [run() for _ in range(runs)]
    return tuple(statistics.median(r[i] for r in results) for i in range(3))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 10000], help="PodCliqueSets in the store")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is printed)")
    parser.add_argument("--source", choices=["files", "cluster"], nargs="+", default=["files", "cluster"])
    parser.add_argument("--form", choices=["json", "yaml"], default="json", help="how the files are written")
    parser.add_argument("--fake-api", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.fake_api is not None:
        fake_api(arguments.fake_api, arguments.kubeconfig)
        return

    size = len(orjson.dumps(podcliqueset(0)))
    print(heading(f"{size:,} bytes of JSON per PodCliqueSet; median of {arguments.runs} runs") + "\n")
    print("| source | PodCliqueSets | ready s | RSS MiB | peak RSS MiB |\n|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as directory:
        certs = Path(directory) / "certs"
        ensure(certs, ["localhost", "127.0.0.1"])
        for n in arguments.n:
            if "files" in arguments.source:
                objects = Path(directory) / f"objects-{n}"
                objects.mkdir()
                write_files(objects, n, arguments.form)
                figures = median_runs(arguments.runs, lambda: serve_once(certs, ["--objects", str(objects)]))
                print("| {} files | {:,} | {:.1f} | {:.0f} | {:.0f} |".format(arguments.form.upper(), n, *figures), flush=True)
            if "cluster" in arguments.source:
                kubeconfig = Path(directory) / f"kubeconfig-{n}"
                api = subprocess.Popen([sys.executable, __file__, "--fake-api", str(n), "--kubeconfig", str(kubeconfig)],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
                try:
                    assert api.stdout is not None and api.stdout.readline().strip() == b"ready"
                    figures = median_runs(arguments.runs, lambda: serve_once(certs, ["--kubeconfig", str(kubeconfig)]))
                    print("| cluster | {:,} | {:.1f} | {:.0f} | {:.0f} |".format(n, *figures), flush=True)
                finally:
                    assert api.stdin is not None
                    api.stdin.close()
                    api.wait(60)


if __name__ == "__main__":
    main()
