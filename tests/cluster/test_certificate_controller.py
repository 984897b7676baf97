"""The chart's controller mode on the real control plane: a release of its own (namespace
``rs-certs-system``, its webhooks selecting only namespace ``rs-certs``) whose two ``serve``
replicas, behind a balancer standing in for its Service, keep the certificate themselves.

- Installed, the release's Secret is empty and its configurations carry no CA; the replicas fill
  the Secret, write its CA into both configurations, and the API server calls them with it.
- With a lifetime of 24 s the certificate is renewed about every 16 s: under a steady stream of
  Grove pod creates through the API server, none fails, the ``caBundle`` gains the new CA (the old
  one kept), one replica writes each renewal (the audit log shows one successful write of the
  Secret per renewal) and every replica serves it, without a restart.
"""

from __future__ import annotations

import base64
import copy
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest
import yaml
from kubernetes import client
from prometheus_client.parser import text_string_to_metric_families

from cluster import audit, kube
from cluster.balancer import Balancer
from cluster.conftest import LOGS
from cluster.controlplane import ControlPlane
from cluster.pods import create, grove_pods
from cluster.ports import free_port
from cluster.processes import WebhookServer
from cluster.release import Release, install
from cluster.tools import Tool
from cluster.workloads import end_to_end
from reconciler.grove import GroveOperator

WORKLOADS, NAMESPACE = "rs-certs", "rs-certs-system"
VALIDITY = "24s"
CREATORS = 3
MOST = 20_000  # a bound on the load: about 200 creates a second on 2 cores, for at most 80 s
ANSWER = 15  # seconds a create may take: the webhooks' timeoutSeconds (10) and some


def selecting(namespace: str) -> dict[str, object]:
    """Values for a release whose webhooks see only ``namespace`` (the session's release is left alone)."""
    only = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    return {"webhooks": {"validating": {"namespaceSelector": only}, "mutating": {"namespaceSelector": only}}}


@dataclass
class Replicas:
    release: Release
    servers: tuple[WebhookServer, ...]
    balancer: Balancer
    pcs: GroveOperator = field(init=False)


@pytest.fixture(scope="module")
def replicas(control_plane: ControlPlane, admin: client.ApiClient, helm: Tool,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicas]:
    workdir = tmp_path_factory.mktemp("certs")
    values = workdir / "values.yaml"
    values.write_text(yaml.safe_dump(selecting(WORKLOADS)))
    kube.create_namespace(admin, WORKLOADS)
    release = install(helm, admin, control_plane, "certs", NAMESPACE, workdir, "-f", str(values))
    servers = tuple(release.server_at(free_port(), workdir / f"replica-{n}", workdir / f"replica-{n}.log", "--cert-validity", VALIDITY)
                    for n in (1, 2))
    LOGS.extend(server.log for server in servers)
    try:
        for server in servers:
            server.command.start()
        with Balancer(release.server.port, [s.port for s in servers], servers[0].ca) as balancer:
            kube.wait_for(balancer.all_ready, "both replicas ready behind the balancer", 60)
            running = Replicas(release, servers, balancer)
            running.pcs = end_to_end(admin, WORKLOADS)
            yield running
    finally:
        for server in servers:
            if server.running():
                server.stop()
        helm("uninstall", release.name, "--namespace", NAMESPACE, "--no-hooks")


def secret_data(admin: client.ApiClient, release: Release) -> dict[str, bytes]:
    data = client.CoreV1Api(admin).read_namespaced_secret(release.secret, release.namespace).data or {}
    return {key: base64.b64decode(value) for key, value in data.items()}


def ca_bundles(admin: client.ApiClient, release: Release) -> list[bytes]:
    registration = client.AdmissionregistrationV1Api(admin)
    found = [registration.read_validating_webhook_configuration(release.fullname),
             registration.read_mutating_webhook_configuration(release.fullname)]
    return [base64.b64decode(w.client_config.ca_bundle or "") for c in found for w in c.webhooks]


def served(server: WebhookServer) -> bytes:
    """The certificate a new connection to ``server`` gets (DER), unverified."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw, context.wrap_socket(raw) as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def der(pem: bytes) -> bytes:
    return ssl.PEM_cert_to_DER_cert(pem.decode())


def mutations(servers: tuple[WebhookServer, ...]) -> float:
    """Pod reviews the replicas have answered, from their metrics."""
    total = 0.0
    for server in servers:
        with httpx.Client(verify=ssl.create_default_context(cafile=server.ca), timeout=5) as scrape:
            text = scrape.get(f"{server.url}/metrics").text
        total += sum(s.value for f in text_string_to_metric_families(text) for s in f.samples
                     if s.name == "webhook_requests_total" and s.labels["webhook"] == "mutate-pod")
    return total


def test_the_api_server_calls_the_webhook_with_the_ca_the_process_wrote(admin, replicas):
    """The chart rendered neither the Secret's data nor a caBundle: both are the replicas'."""
    release = replicas.release
    stored = secret_data(admin, release)
    assert set(stored) == {"ca.crt", "tls.crt", "tls.key"}
    assert ca_bundles(admin, release) == [stored["ca.crt"]] * 3  # the PodCliqueSet, scale and pod webhooks
    for server in replicas.servers:
        assert served(server) == der(stored["tls.crt"]) and server.ca.read_bytes() == stored["ca.crt"]
    before = mutations(replicas.servers)
    assert create(admin, copy.deepcopy(grove_pods(replicas.pcs)[0]))["spec"]["resourceClaims"]
    assert mutations(replicas.servers) == before + 1, "the API server called the release's pod webhook"


class Creates:
    """Grove pods created through the API server by a few clients without pause."""

    def __init__(self, admin: client.ApiClient, pod: dict[str, object]) -> None:
        self.admin, self.pod = admin, pod
        self.results: list[str] = []
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self._create) for _ in range(CREATORS)]

    def _create(self) -> None:
        while not self.done.is_set() and len(self.results) < MOST:
            try:
                stored = create(self.admin, copy.deepcopy(self.pod), timeout=ANSWER)
                outcome = "with claims" if stored["spec"].get("resourceClaims") else "without claims"
            except client.ApiException as err:
                outcome = f"refused: {err.status} {err.body}"
            except Exception as err:  # noqa: BLE001 - a creator that dies silently would stall the count
                outcome = f"no answer: {type(err).__name__}: {err}"
            self.results.append(outcome)

    def count(self, what: str) -> int:
        """Creates answered so far; a creator gone quiet fails the test with what it last saw."""
        if not any(thread.is_alive() for thread in self.threads):
            raise AssertionError(f"every creator stopped while waiting for {what}: {self.results[-3:]}")
        return len(self.results)

    def __enter__(self) -> Creates:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join(30)


def test_a_renewal_under_load_fails_no_create_and_every_replica_serves_it(control_plane, admin, replicas):
    release, servers = replicas.release, replicas.servers
    before = secret_data(admin, release)
    old_bundle = ca_bundles(admin, release)[0]
    started = time.monotonic()
    switched: dict[int, float] = {}
    with Creates(admin, grove_pods(replicas.pcs)[0]) as creates:
        renewed = kube.wait_for(lambda: (d := secret_data(admin, release))["tls.crt"] != before["tls.crt"] and d,
                                "a renewal", 30, interval=0.05)
        written = time.monotonic()
        new = der(renewed["tls.crt"])

        def all_moved() -> bool:
            for n, server in enumerate(servers):
                if n not in switched and served(server) == new:
                    switched[n] = time.monotonic()
            return len(switched) == len(servers)

        kube.wait_for(all_moved, "every replica serving the renewed certificate", 20, interval=0.05)
        settled = len(creates.results)
        kube.wait_for(lambda: creates.count("20 creates") >= settled + 20, "20 creates after the renewal",
                      2 * ANSWER + 30)
    failures = [r for r in creates.results if r != "with claims"]
    assert len(creates.results) >= 40 and not failures, f"{len(failures)} of {len(creates.results)} creates: {failures[:3]}"

    new_bundle = ca_bundles(admin, release)
    assert all(bundle == new_bundle[0] for bundle in new_bundle) and new_bundle[0] != old_bundle
    assert new_bundle[0].endswith(old_bundle) or old_bundle in new_bundle[0], "the old CA kept in the bundle"
    assert new_bundle[0].count(b"BEGIN CERTIFICATE") >= 2

    logs = [server.command.text() for server in servers]
    renewals = sum(len(re.findall(r"renewed the serving certificate in Secret", text)) for text in logs)
    writes = [r for r in audit.requests(control_plane.audit_log)
              if r.resource == "secrets" and r.name == release.secret and r.verb == "update" and r.code == 200]
    assert renewals == len(writes) >= 2, "each renewal (the first fill included) written by one replica, once"
    assert all("now serving the certificate of Secret" in text for text in logs), "every replica reloaded"
    print(f"\nrenewal under load: {len(creates.results)} creates, {len(failures)} failed; "
          f"renewal seen {written - started:.1f} s into the load; replicas serving it "
          f"{', '.join(f'{switched[n] - written:.1f} s' for n in sorted(switched))} after it was written")
