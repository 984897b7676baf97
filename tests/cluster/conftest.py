"""The real-control-plane tier: one control plane per test run, Grove's CRDs in it, the chart
installed by the real helm, and ``webhook serve`` called by the real kube-apiserver.

Skipped, with one line saying how to get the binaries, where there are none (``cluster.assets``).
A failing test's report carries the tail of every process's log; the logs themselves stay in the
test run's temporary directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from cluster import kube
from cluster.assets import Assets, Unavailable
from cluster.controlplane import ControlPlane
from cluster.groveapi import ClusterApi
from cluster.processes import Command, reconciler
from cluster.release import NAMESPACE, RELEASE, VALIDATION, Release, install
from cluster.tools import Tool
from core.workload import workload_pcs_raw
from reconciler.grove import GroveOperator

CRDS = Path(os.environ.get("GROVE_CRDS") or Path(__file__).parent / "crds")

DRA_FEATURES = ("DRAAdminAccess", "DRAConsumableCapacity", "DRADerivedAttributes", "DRADeviceTaints", "DRAPrioritizedList")
"""Turned on where they are not yet generally available, so that claims may use every field of
``resource.k8s.io/v1`` the release has."""
RELEASES = (NAMESPACE, "rs-certs-system", "rs-gone-system", "rs-tenant-system")
"""The namespaces of the releases the tier installs: the session's and those of tests of their own."""
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "Metadata", "userGroups": [f"system:serviceaccounts:{namespace}" for namespace in RELEASES]},
        {"level": "None"},
    ],
}
"""Every request of the releases' ServiceAccounts, for the checks that the chart's RBAC is exactly
what the components use."""

LOGS: list[Path] = []
"""Logs whose tails a failing test's report shows."""
TIER: dict[str, str] = {}
"""What the tier ran against, for the test summary."""


def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    if call.excinfo is not None and call.when == "call" and LOGS:
        tails = "\n".join(f"--- {path}\n{_tail(path)}" for path in LOGS)
        item.add_report_section("call", "control plane and webhook logs (tails)", tails)


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without binaries the tier's tests are left out, and the summary says why in one line.
    With them, the test that stops kube-apiserver runs last: for a while after a restart the
    controller manager's garbage collector is behind, which other tests would see."""
    here = Path(__file__).parent
    try:
        Assets.find()
    except Unavailable as err:
        tier = {id(item) for item in items if item.path.is_relative_to(here)}
        if tier:
            TIER["skipped"] = f"{len(tier)} tests skipped: {err}"
            config.hook.pytest_deselected(items=[item for item in items if id(item) in tier])
            items[:] = [item for item in items if id(item) not in tier]
        return
    last = [item for item in items if item.path == here / "test_apiserver_outage.py"]
    items[:] = [item for item in items if item not in last] + last


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if "skipped" in TIER:
        terminalreporter.write_line(f"cluster tier: {TIER['skipped']}")
    elif "version" in TIER:
        terminalreporter.write_line(
            f"cluster tier: ran against kube-apiserver {TIER['version']} ({TIER['assets']}); Grove CRDs from {TIER['crds']}"
        )
        if "policy" in TIER:
            terminalreporter.write_line(f"cluster tier: {TIER['policy']}")


@pytest.fixture(scope="session")
def assets() -> Assets:
    return Assets.find()


@pytest.fixture(scope="session")
def control_plane(assets: Assets, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    available = assets.feature_gates()
    gates = {name: True for name in DRA_FEATURES if name in available}
    # While device taints are alpha (1.34), the scheduler watches their rules in the alpha API.
    served = ("resource.k8s.io/v1alpha3=true",) if available.get("DRADeviceTaints") == "ALPHA" else ()
    plane = ControlPlane(assets, tmp_path_factory.mktemp("controlplane"), gates, AUDIT_POLICY, served)
    LOGS.extend(plane.logs / f"{name}.log" for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"))
    try:
        plane.start()
        kube.install_crds(kube.api_client(plane.admin), CRDS)
        plane.start_controllers()
        TIER.update(version=assets.kubernetes_version(), assets=f"KUBEBUILDER_ASSETS={assets.directory}", crds=str(CRDS))
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def admin(control_plane: ControlPlane) -> client.ApiClient:
    return kube.api_client(control_plane.admin)


@pytest.fixture(scope="session")
def kubectl(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Tool:
    return Tool(control_plane.assets.binary("kubectl"), control_plane.admin, tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="session")
def helm(control_plane: ControlPlane, kubectl: Tool) -> Tool:
    try:
        binary = control_plane.assets.binary("helm")
    except Unavailable as err:
        pytest.skip(f"cluster tier: {err}")
    return Tool(binary, control_plane.admin, kubectl.home)


@pytest.fixture(scope="session")
def release(control_plane: ControlPlane, admin: client.ApiClient, helm: Tool,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Release]:
    """``helm install`` of the chart in its default certificate mode (controller), its webhooks
    pointed at a local ``webhook serve`` that keeps the release's certificate, as its pods would,
    and reads the cluster as the chart's ServiceAccount; the policy beside the webhook
    (``release.VALIDATION``)."""
    release = install(helm, admin, control_plane, RELEASE, NAMESPACE, tmp_path_factory.mktemp("release"), *VALIDATION)
    LOGS.append(release.server.log)
    release.server.start()
    try:
        yield release
    finally:
        if release.server.running():
            release.server.stop()


@pytest.fixture(scope="session")
def workload(release: Release, admin: client.ApiClient) -> GroveOperator:
    """Grove's end-to-end PodCliqueSet in namespace ``rs-pods``, created through the webhooks, with
    the scaling groups and PodCliques Grove's operator makes of it."""
    kube.create_namespace(admin, "rs-pods")
    operator = GroveOperator(ClusterApi(admin), workload_pcs_raw(1, "rs-pods"))
    operator.sync()
    return operator


@pytest.fixture(scope="session")
def reconciling(release: Release, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Command]:
    """``webhook reconcile`` as the chart's ServiceAccount, leader of the chart's Lease."""
    process = reconciler(release.kubeconfig, release.namespace, tmp_path_factory.mktemp("reconciler") / "reconcile.log")
    LOGS.append(process.log)
    process.start()
    try:
        yield process
    finally:
        if process.running():
            process.stop()
