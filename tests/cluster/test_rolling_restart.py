"""A rolling restart under load, with the real API server as the webhook's client: two ``serve``
processes behind a balancer standing in for the Service's endpoints, Grove pods created through the
API server without pause, one process restarted (SIGTERM, then started again) and then the other.
Every create succeeds and every pod carries its claims."""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator

import pytest
from kubernetes import client

from cluster import kube
from cluster.balancer import Balancer
from cluster.pods import create, grove_pods
from cluster.ports import free_port
from cluster.processes import WebhookServer
from cluster.release import Release
from reconciler.grove import GroveOperator

CREATORS = 3
MOST = 2000
"""A bound on the creates, should the restarts hang."""


@pytest.fixture
def two_replicas(release: Release) -> Iterator[tuple[Balancer, tuple[WebhookServer, WebhookServer]]]:
    """The release's server replaced by two behind a balancer on its port, for the test."""
    assert release.server.stop() == 0
    main = release.server
    replicas = tuple(
        release.server_at(free_port(), main.cert.parent.with_name(f"replica-{n}"), main.log.with_name(f"replica-{n}.log"),
                          "--shutdown-delay", "1")
        for n in (1, 2)
    )
    try:
        for replica in replicas:
            replica.start()
        with Balancer(main.port, [r.port for r in replicas], replicas[0].ca) as balancer:
            kube.wait_for(balancer.all_ready, "both replicas to be endpoints")
            yield balancer, replicas  # type: ignore[misc]
            assert balancer.connections > 0
    finally:
        for replica in replicas:
            if replica.running():
                replica.stop()
        main.start()


def test_a_rolling_restart_under_load_loses_no_create(
    workload: GroveOperator, admin: client.ApiClient, two_replicas: tuple[Balancer, tuple[WebhookServer, WebhookServer]]
) -> None:
    balancer, replicas = two_replicas
    pod = grove_pods(workload)[0]
    done = threading.Event()
    results: list[str] = []
    lock = threading.Lock()

    def creator() -> None:
        while not done.is_set() and len(results) < MOST:
            try:
                stored = create(admin, copy.deepcopy(pod))
                outcome = "with claims" if stored["spec"].get("resourceClaims") else "without claims"
            except client.ApiException as err:
                outcome = f"refused: {err.status} {err.body}"
            with lock:
                results.append(outcome)

    threads = [threading.Thread(target=creator) for _ in range(CREATORS)]
    for thread in threads:
        thread.start()
    try:
        for replica in replicas:
            settled = len(results)
            assert replica.stop() == 0
            replica.start()
            kube.wait_for(balancer.all_ready, "the restarted replica to be an endpoint again")
            kube.wait_for(lambda: len(results) >= settled + 20, "20 creates across the restart")
    finally:
        done.set()
        for thread in threads:
            thread.join(30)
    failures = [r for r in results if r != "with claims"]
    assert len(results) >= 40 and not failures, f"{len(failures)} of {len(results)} creates: {failures[:3]}"
