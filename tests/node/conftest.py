"""The node tier: the image built from the Dockerfile and the chart installed by the README's own
commands on a real single-node Kubernetes (``node.Node``) inside a network namespace of the tier's
own, as users run it.

It runs where it can (root, ``ip netns`` and ``nsenter``, Go, the control plane and kubelet of
``make controlplane``, Debian's packages installed or installable: ``host.requirements``); anywhere
else the test summary says in one line that it was skipped and why. Everything it makes is taken
away at the end of the session, also after a failed test. A failing test's report carries the tail
of the node's logs (kubelet, containerd, the control plane).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from cluster import kube
from cluster.assets import Assets
from cluster.controlplane import tail
from node import host
from node.images import Images
from node.node import Node
from node.readme import Shell

HERE = Path(__file__).parent
CRDS = Path(os.environ.get("GROVE_CRDS") or HERE.parent / "cluster" / "crds")
TIER: dict[str, str] = {}
LOGS: list[Path] = []
SERVICE_MONITOR_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "servicemonitors.monitoring.coreos.com"},
    "spec": {"group": "monitoring.coreos.com", "scope": "Namespaced",
             "names": {"plural": "servicemonitors", "singular": "servicemonitor", "kind": "ServiceMonitor", "listKind": "ServiceMonitorList"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}
"""The Prometheus Operator's ServiceMonitor kind, schemaless: the chart's ServiceMonitor needs the
kind to exist; the test reads it as Prometheus would."""


def _assets() -> Path | None:
    named = os.environ.get("KUBEBUILDER_ASSETS")
    return Path(named) if named else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tier = [item for item in items if item.path.is_relative_to(HERE)]
    if not tier:
        return
    try:
        host.requirements(_assets())
    except host.Unavailable as err:
        TIER["skipped"] = f"{len(tier)} tests skipped: {err}"
        config.hook.pytest_deselected(items=tier)
        items[:] = [item for item in items if not item.path.is_relative_to(HERE)]


def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    if call.excinfo is not None and call.when in ("call", "setup") and LOGS and item.path.is_relative_to(HERE):
        tails = "\n".join(f"--- {path}\n{tail(path, 25)}" for path in LOGS)
        item.add_report_section(call.when, "node logs (tails)", tails)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if "skipped" in TIER:
        terminalreporter.write_line(f"node tier: {TIER['skipped']}")
    elif "ran" in TIER:
        terminalreporter.write_line(f"node tier: {TIER['ran']}")
        for key in ("stale", "kill", "memory"):
            if key in TIER:
                terminalreporter.write_line(f"node tier: {TIER[key]}")
        if "cleanup" in TIER:
            terminalreporter.write_line(f"node tier: {TIER['cleanup']}")


@pytest.fixture(scope="session")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    """The node, its images imported, Grove's CRDs and the ServiceMonitor kind installed."""
    assets = Assets.find()
    workdir = tmp_path_factory.mktemp("node")
    started = time.monotonic()
    images = Images(host.cache_dir(), workdir, workdir / "images.log")
    LOGS.append(images.log)
    try:
        archives = [images.pause_archive(), images.project_archive()]
    finally:
        images.clean()
    made = time.monotonic() - started
    node = Node(assets, workdir / "node", images.pause, archives)
    LOGS[:] = node.log_paths
    try:
        node.start()
        admin = node.admin()
        kube.install_crds(admin, CRDS)
        client.ApiextensionsV1Api(admin).create_custom_resource_definition(SERVICE_MONITOR_CRD)
        TIER["ran"] = (
            f"ran on a kubelet {assets.kubernetes_version()} node in network namespace {node.name}; images "
            f"{'built: ' + ', '.join(images.built) if images.built else 'from the cache'} in {made:.0f} s, "
            f"node up in {node.timings['node up']:.0f} s"
        )
        if node.stale:
            TIER["stale"] = f"removed what killed runs had left: {', '.join(node.stale)}"
        yield node
    finally:
        problems = node.stop()
        TIER["cleanup"] = "everything it made removed" if not problems else "left behind: " + "; ".join(problems)


@pytest.fixture(scope="session")
def admin(node: Node) -> client.ApiClient:
    return node.admin()


@pytest.fixture(scope="session")
def shell(node: Node, tmp_path_factory: pytest.TempPathFactory) -> Shell:
    assert node.plane is not None
    return Shell(node.assets.directory, node.plane.admin, tmp_path_factory.mktemp("user"))
