"""The latency the webhooks add to creating objects through the API server, on the node tier's
single-node Kubernetes (tests/node: the image built from the Dockerfile, the chart installed as the
README installs it, two replicas behind their Service, the API server calling them at their
endpoints):

- a Grove pod, as Grove's operator creates it (the mutating webhook adds its claims);
- a PodCliqueSet, Grove's end-to-end workload under a new name (the validating webhook decides it).

Each is created ``--n`` times one after another by one client on a kept-alive connection, inside
the node's network namespace (no forwarder in between), in alternating blocks with the webhooks'
configurations in place and deleted (the same objects put back), so that drift on a shared machine
falls on both alike. The reconciler is left out (``reconciler.enabled=false``): it would write
claims for every PodCliqueSet meanwhile. Printed: p50, p90, p99 and mean of each, and what the
webhook adds at p50 and p99.

Needs what the node tier needs (root, network namespaces, ``make controlplane``, Debian's
packages; docs/testing.md). Run: ``sudo .venv/bin/python bench/node_latency.py [--n 400] [--block 50]``.
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("KUBEBUILDER_ASSETS", str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                                              / "grove-sharing-webhook" / "controlplane" / "1.37.2"))

from kubernetes import client  # noqa: E402

from cluster import kube  # noqa: E402
from cluster.assets import Assets  # noqa: E402
from cluster.pods import grove_pods  # noqa: E402
from cluster.workloads import end_to_end  # noqa: E402
from node import host  # noqa: E402
from node.conftest import CRDS  # noqa: E402
from node.images import Images  # noqa: E402
from node.node import Node  # noqa: E402
from node.pods import NAMESPACE, RELEASE, wait_ready  # noqa: E402
from node.readme import Shell, install, with_values  # noqa: E402

Obj = dict[str, Any]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Webhooks:
    """Both configurations, deleted and put back as they were."""

    def __init__(self, admin: client.ApiClient, probe: Obj) -> None:
        self.api = client.AdmissionregistrationV1Api(admin)
        self.probe = probe
        self.saved = (self.api.read_validating_webhook_configuration(RELEASE), self.api.read_mutating_webhook_configuration(RELEASE))

    def remove(self) -> None:
        self.api.delete_validating_webhook_configuration(RELEASE)
        self.api.delete_mutating_webhook_configuration(RELEASE)

    def restore(self) -> None:
        validating, mutating = (copy.deepcopy(c) for c in self.saved)
        for configuration in (validating, mutating):
            configuration.metadata = client.V1ObjectMeta(name=RELEASE, labels=configuration.metadata.labels)
        self.api.create_validating_webhook_configuration(validating)
        self.api.create_mutating_webhook_configuration(mutating)

    def wait_applied(self, api: client.ApiClient, present: bool, deadline: float = 30) -> None:
        """Until the API server acts on the change (its informer of webhook configurations lags
        the write): a probe pod is stored with claims exactly when the webhooks are ``present``."""
        end = time.monotonic() + deadline
        while True:
            stored = client.CoreV1Api(api).create_namespaced_pod("rs-bench", self.probe)
            if bool(stored.spec.resource_claims) == present:
                return
            if time.monotonic() > end:
                raise RuntimeError(f"the webhooks' {'return' if present else 'removal'} not applied within {deadline:g} s")
            time.sleep(0.05)


def measure(node: Node, kubeconfig: Path, cases: dict[str, Any], webhooks: Webhooks, n: int, block: int) -> dict[str, dict[str, list[float]]]:
    """Times of ``n`` creates of each case with and without the webhooks, from a thread inside the
    node's network namespace."""
    times: dict[str, dict[str, list[float]]] = {name: {"with": [], "without": []} for name in cases}
    errors: list[BaseException] = []

    def run() -> None:
        try:
            host.enter(node.netns.path)
            api = kube.api_client(kubeconfig)
            for create in cases.values():  # warm the connection and both replicas' caches
                for _ in range(20):
                    create(api)
            for number in range(2 * (n // block)):
                side = "with" if number % 2 == 0 else "without"
                for name, create in cases.items():
                    for _ in range(block):
                        began = time.perf_counter()
                        create(api)
                        times[name][side].append(time.perf_counter() - began)
                if side == "with":
                    webhooks.remove()
                else:
                    webhooks.restore()
                webhooks.wait_applied(api, side == "without")
        except BaseException as err:
            errors.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=400, help="creates of each case with, and as many without, the webhooks")
    parser.add_argument("--block", type=int, default=50, help="creates of each case before switching")
    options = parser.parse_args()
    assets = Path(os.environ["KUBEBUILDER_ASSETS"])
    try:
        host.requirements(assets)
    except host.Unavailable as err:
        print(f"node_latency: skipped: {err}")
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="node-latency-"))
    images = Images(host.cache_dir(), workdir, workdir / "images.log")
    try:
        archives = [images.pause_archive(), images.project_archive()]
    finally:
        images.clean()
    node = Node(Assets(assets), workdir / "node", images.pause, archives)
    try:
        node.start()
        assert node.plane is not None
        admin = node.admin()
        kube.install_crds(admin, CRDS)
        shell = Shell(assets, node.plane.admin, workdir / "user")
        shell(with_values(install("controller"), "--set", "reconciler.enabled=false"))
        wait_ready(admin, 2)
        operator = end_to_end(admin, "rs-bench")
        pod = grove_pods(operator)[0]
        pcs = copy.deepcopy(operator.pcs)
        pcs["metadata"] = {"generateName": "rs-bench-", "namespace": "rs-bench"}
        pcs.pop("status", None)
        counter = iter(range(10**9))

        def create_pod(api: client.ApiClient) -> None:
            client.CoreV1Api(api).create_namespaced_pod("rs-bench", pod)

        def create_pcs(api: client.ApiClient) -> None:
            body = copy.deepcopy(pcs)
            body["metadata"] = {"name": f"rs-bench-{next(counter)}", "namespace": "rs-bench"}
            client.CustomObjectsApi(api).create_namespaced_custom_object("grove.io", "v1alpha1", "rs-bench", "podcliquesets", body)

        cases = {"Grove pod (mutating webhook)": create_pod, "PodCliqueSet (validating webhook)": create_pcs}
        times = measure(node, node.plane.admin, cases, Webhooks(admin, pod), options.n, options.block)
        print(f"\n{options.n} creates of each, with and without the webhooks, in alternating blocks of {options.block}; "
              f"one client inside the node's namespace; ms\n")
        print("| create | webhooks | p50 | p90 | p99 | mean |")
        print("|---|---|---|---|---|---|")
        for name, sides in times.items():
            for side in ("without", "with"):
                values = sides[side]
                print(f"| {name} | {side} | {percentile(values, 0.5) * 1e3:.2f} | {percentile(values, 0.9) * 1e3:.2f} | "
                      f"{percentile(values, 0.99) * 1e3:.2f} | {statistics.mean(values) * 1e3:.2f} |")
        print()
        for name, sides in times.items():
            added = {q: (percentile(sides["with"], q) - percentile(sides["without"], q)) * 1e3 for q in (0.5, 0.99)}
            print(f"{name}: the webhook adds {added[0.5]:.2f} ms at p50, {added[0.99]:.2f} ms at p99")
        return 0
    finally:
        problems = node.stop()
        if problems:
            print(f"left behind: {problems}", file=sys.stderr)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
