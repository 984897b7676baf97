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

import base64
import os
import time
from collections.abc import Iterator

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cluster.pods import grove_pods
from cluster.workloads import end_to_end
from node import checks
from node.conftest import TIER
from node.images import CHART
from node.loads import Attack, Creators, MiB
from node.node import Node
from node.pods import (NAMESPACE, RELEASE, ca_bundle, connect, container_cgroup, container_pids, get, is_ready, until,
                       wait_ready, webhook_pods)
from node.readme import Shell
from node.release import installed
from reconciler.grove import GroveOperator

UPGRADE = f"helm upgrade {RELEASE} charts/grove-sharing-webhook --namespace {NAMESPACE} --reuse-values"
LOAD = "rs-load"


def limit(container: str) -> int:
    value = yaml.safe_load((CHART / "values.yaml").read_text())["resources"][container]["limits"]["memory"]
    assert value.endswith("Mi")
    return int(value[:-2]) * MiB


@pytest.fixture(scope="module")
def release(node: Node, shell: Shell, admin: client.ApiClient) -> Iterator[None]:
    with installed(shell, admin, "controller"):
        wait_ready(admin, 2)
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


@pytest.fixture(scope="module")
def workload(release: None, admin: client.ApiClient) -> Iterator[GroveOperator]:
    """Grove's end-to-end workload in a namespace of the loads', its children made."""
    yield end_to_end(admin, LOAD)
    client.CoreV1Api(admin).delete_namespace(LOAD)


def test_metrics_are_scraped_through_the_service_as_the_service_monitor_says(
    release: None, node: Node, shell: Shell, admin: client.ApiClient
) -> None:
    """As Prometheus does with the chart's ServiceMonitor: the Service's endpoints of its port,
    each scraped over TLS verified against the CA the ServiceMonitor names, for its serverName."""
    shell(f"{UPGRADE} --set serviceMonitor.enabled=true")
    monitor = client.CustomObjectsApi(admin).get_namespaced_custom_object(
        "monitoring.coreos.com", "v1", NAMESPACE, "servicemonitors", RELEASE)
    endpoint = next(e for e in monitor["spec"]["endpoints"] if e["port"] == "metrics")
    assert endpoint["scheme"] == "https"
    tls = endpoint["tlsConfig"]
    secret = client.CoreV1Api(admin).read_namespaced_secret(tls["ca"]["secret"]["name"], NAMESPACE)
    ca = base64.b64decode(secret.data[tls["ca"]["secret"]["key"]])
    slices = client.DiscoveryV1Api(admin).list_namespaced_endpoint_slice(
        NAMESPACE, label_selector=f"kubernetes.io/service-name={RELEASE}").items
    targets = [(address, port.port) for s in slices for port in s.ports if port.name == "metrics"
               for e in s.endpoints if e.conditions.ready for address in e.addresses]
    assert len(targets) == 2, targets
    for ip, port in targets:
        status, text = get(node.netns, ip, port, endpoint["path"], ca, tls["serverName"])
        assert status == 200 and b"# TYPE webhook_requests_in_flight gauge" in text, text[:300]
    reconciler = next(e for e in monitor["spec"]["endpoints"] if e["port"] == "reconciler")
    assert reconciler["scheme"] == "http"


def test_a_rollout_restart_under_load_refuses_no_grove_pod(
    release: None, workload: GroveOperator, shell: Shell, admin: client.ApiClient
) -> None:
    """Three clients, each creating 10 Grove pods a second (paced, so that how long the rollout
    takes on a busy machine changes only how many pods are made, never whether the load lasts it
    out), from before the restart until 20 creates after it is done."""
    rate, count, restart_deadline = 10, 3, 180
    with Creators(admin, grove_pods(workload)[0], count, most=rate * count * (restart_deadline + 60), rate=rate) as creators:
        until(lambda: creators.count() >= 20, "creates before the restart")
        shell(f"kubectl -n {NAMESPACE} rollout restart deployment/{RELEASE} && "
              f"kubectl -n {NAMESPACE} rollout status deployment/{RELEASE} --timeout={restart_deadline}s", timeout=restart_deadline + 60)
        settled = creators.count()
        assert not creators.exhausted(), f"the clients reached their bound of {creators.most} creates during the restart"
        until(lambda: creators.count() >= settled + 20, "creates after the restart")
    assert creators.count() >= 40 and not creators.failures(), f"{len(creators.failures())} of {creators.count()}: {creators.failures()[:3]}"


def test_a_killed_webhook_container_is_ready_again_only_once_its_certificate_is_trusted(
    release: None, workload: GroveOperator, node: Node, admin: client.ApiClient
) -> None:
    """``kill -9`` of one replica's webhook container while two clients create Grove pods. Until
    kubelet has seen it die and its endpoint is withdrawn (about half a second), the API server's
    calls that go to it are refused (connection refused; reset, or closed without an answer or in
    the middle of one, for a request it was reading or answering: the API server does not retry
    these, and the webhook fails closed); from then on the other replica answers every call. The
    killed one is restarted and Ready again only serving a certificate the webhook configurations
    trust."""
    victim, other = wait_ready(admin, 2)
    core = client.CoreV1Api(admin)
    discovery = client.DiscoveryV1Api(admin)
    restarts = next(s.restart_count for s in victim.status.container_statuses if s.name == "webhook")

    def endpoint_ready() -> bool:
        slices = discovery.list_namespaced_endpoint_slice(NAMESPACE, label_selector=f"kubernetes.io/service-name={RELEASE}").items
        return any(e.conditions.ready and victim.status.pod_ip in e.addresses for s in slices for e in s.endpoints or [])

    with Creators(admin, grove_pods(workload)[0], count=2) as creators:
        until(lambda: creators.count() >= 10, "creates before the kill")
        killed = time.monotonic()
        for pid in container_pids(node, victim, "webhook"):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        until(lambda: not endpoint_ready(), "the killed replica's endpoint to be withdrawn", 30, 0.02)
        withdrawn = time.monotonic()
        back = until(lambda: (lambda p: p if is_ready(p) else None)(core.read_namespaced_pod(victim.metadata.name, NAMESPACE)),
                     "the killed replica to be ready again", 90, 0.05)
        # Ready again: the certificate it serves is one the API server trusts (verified as it verifies).
        connect(node.netns, back.status.pod_ip, 8443, ca_bundle(admin)).close()
        ready = time.monotonic()
        until(lambda: creators.between(ready, time.monotonic()) >= 10, "creates once it is back")
    refused = [(at, outcome) for at, outcome in creators.results if outcome != "with claims"]
    lost = (f"{victim.status.pod_ip}:8443: connect: connection refused", f"{victim.status.pod_ip}:8443: read: connection reset by peer",
            'mutate-pod?timeout=10s\\": EOF', "reading response body. Please retry. Original error: unexpected EOF")
    assert all("failed calling webhook" in o and any(how in o for how in lost) for _, o in refused), refused[:2]
    assert all(killed <= at <= withdrawn + 1.0 for at, _ in refused), (killed, withdrawn, [at for at, _ in refused][-3:])
    assert creators.between(withdrawn + 1.0, ready) > 0, "no create while the other replica answered alone"
    assert next(s.restart_count for s in back.status.container_statuses if s.name == "webhook") == restarts + 1
    assert is_ready(core.read_namespaced_pod(other.metadata.name, NAMESPACE))
    TIER["kill"] = (f"a killed webhook container: {len(refused)} of {creators.count()} creates refused in the "
                    f"{withdrawn - killed:.2f} s before its endpoint was withdrawn, none after; Ready again after "
                    f"{ready - killed:.1f} s")


def test_evictions_respect_the_pod_disruption_budget(release: None, admin: client.ApiClient) -> None:
    first, second = wait_ready(admin, 2)
    core = client.CoreV1Api(admin)

    def evict(pod: client.V1Pod) -> None:
        core.create_namespaced_pod_eviction(pod.metadata.name, NAMESPACE, client.V1Eviction(
            metadata=client.V1ObjectMeta(name=pod.metadata.name, namespace=NAMESPACE)))

    evict(first)
    with pytest.raises(ApiException) as refused:
        evict(second)
    assert refused.value.status == 429 and "disruption budget" in refused.value.body, refused.value.body
    assert second.metadata.name in [p.metadata.name for p in wait_ready(admin, 2)]
    budget = client.PolicyV1Api(admin).read_namespaced_pod_disruption_budget(RELEASE, NAMESPACE)
    until(lambda: client.PolicyV1Api(admin).read_namespaced_pod_disruption_budget(RELEASE, NAMESPACE).status.disruptions_allowed == 1,
          "the budget to allow a disruption again", 60)
    assert budget.spec.min_available == 1
    evict(second)
    wait_ready(admin, 2)


def test_peak_memory_under_hostile_clients_stays_under_the_limits(
    release: None, workload: GroveOperator, node: Node, admin: client.ApiClient
) -> None:
    """Against one replica: 50 connections each sending an 8 MiB body but its last piece; 20 sending
    a review whose 7.5 MB uid its answer echoes, never reading it; then the worst case, both at once
    while Grove pods are created and the reconciler makes the claims of a scale-out. The peak of each
    container's memory cgroup (what its limit applies to) stays under the chart's limit."""
    target = wait_ready(admin, 2)[0]
    cgroups = {name: container_cgroup(node, target, name) for name in ("webhook", "reconciler")}
    for path in cgroups.values():
        (path / "memory.max_usage_in_bytes").write_text("0")
    ca = ca_bundle(admin)

    def attack(slow: int, unread: int) -> None:
        hostile = Attack(node.netns, target.status.pod_ip, 8443, ca)
        hostile.slow_bodies(slow, 8 * MiB)
        hostile.unread_answers(unread, 7_500_000)
        try:
            hostile.run()
            assert len(hostile.held) + hostile.answered == slow + unread
        finally:
            hostile.close()

    attack(50, 0)
    attack(0, 20)
    with Creators(admin, grove_pods(workload)[0], count=2) as creators:
        workload.scale("podcliquesets", workload.name, 10)
        attack(50, 20)
    assert not creators.failures(), creators.failures()[:3]
    peaks = {name: int((path / "memory.max_usage_in_bytes").read_text()) for name, path in cgroups.items()}
    TIER["memory"] = "peak memory under the hostile loads: " + ", ".join(
        f"{name} {peak / MiB:.0f} MiB of {limit(name) / MiB:.0f}" for name, peak in peaks.items())
    assert all(peaks[name] < limit(name) for name in cgroups), peaks
    assert is_ready(client.CoreV1Api(admin).read_namespaced_pod(target.metadata.name, NAMESPACE))


def test_an_upgrade_to_the_policy_and_a_reconciler_deployment_passes_the_readmes_checks(
    release: None, shell: Shell, admin: client.ApiClient
) -> None:
    checks.remove_demo(admin)
    shell(f"{UPGRADE} --set validation.mode=policy --set reconciler.mode=deployment")
    shell(f"kubectl -n {NAMESPACE} rollout status deployment/{RELEASE}-reconciler --timeout=120s")
    checks.readme_checks(shell, admin, containers=1, validating=False)
    lease = client.CoordinationV1Api(admin).read_namespaced_lease(f"{RELEASE}-reconciler", NAMESPACE)
    assert lease.spec.holder_identity.startswith(f"{RELEASE}-reconciler-"), lease.spec.holder_identity


def test_uninstall_leaves_nothing(release: None, shell: Shell, admin: client.ApiClient) -> None:
    checks.uninstall_leaves_nothing(shell, admin)
