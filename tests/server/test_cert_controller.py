"""``webhook serve --cert-secret`` as a process against an API server: it serves the certificate it
keeps in the Secret, whose CA it wrote into both webhook configurations, and is ready once they
trust it; ``/metrics`` on a port of its own. (A renewal under load, with two replicas behind a
balancer and the real API server calling them: tests/cluster/test_certificate_controller.py.)"""

from __future__ import annotations

import socket
import ssl
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from fakeapi import CuttableProxy, FakeApiServer

from certificates.harness import CONFIGURATION, NAMESPACE, SECRET, bundles, install, secret_data
from fakeapi.fixtures import fake_api, fake_api_server, kubeconfig_path  # noqa: F401
from server.serverproc import Served, free_port, poll, serve


def controller_args(kubeconfig: Path, *extra: str) -> list[str]:
    return ["--kubeconfig", str(kubeconfig), "--objects", "examples/objects", "--cert-secret", SECRET,
            "--cert-secret-namespace", NAMESPACE, "--webhook-configuration", CONFIGURATION,
            "--cert-hosts", "localhost,127.0.0.1", "--log-format", "text", *extra]


def trusting_the_configurations(api: FakeApiServer) -> ssl.SSLContext:
    """A client that trusts what the webhook configurations say, as the API server does."""
    return ssl.create_default_context(cadata=bundles(api)[0].decode())


def served_certificate(served: Served, context: ssl.SSLContext) -> bytes:
    port = urlsplit(served.url).port
    with socket.create_connection(("127.0.0.1", port)) as raw, context.wrap_socket(raw, server_hostname="localhost") as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


@pytest.fixture
def cluster(fake_api: FakeApiServer) -> FakeApiServer:
    install(fake_api)
    return fake_api


def test_it_serves_the_secret_s_certificate_trusted_by_the_configurations(cluster, kubeconfig_path, tmp_path):
    files = tmp_path / "tls"
    with serve(tmp_path, *controller_args(kubeconfig_path), cert=files / "tls.crt", key=files / "tls.key", ca=files / "ca.crt") as served:
        stored = secret_data(cluster)
        assert served_certificate(served, trusting_the_configurations(cluster)) == ssl.PEM_cert_to_DER_cert(stored["tls.crt"].decode())
        with served.client() as client:
            poll(lambda: client.get("/readyz").status_code == 200, "ready once both configurations trust its CA")
        served.terminate()
        assert served.exit_code() == 0


def test_without_the_api_server_it_starts_at_once_unready_and_stops_on_sigterm(cluster, tmp_path):
    """A replica whose API server is away listens (probes answered, a placeholder certificate),
    says why it is not ready, and still exits 0 at once on SIGTERM."""
    files = tmp_path / "tls"
    with CuttableProxy((cluster.host, cluster.port)) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kubeconfig")
        proxy.cut()
        with serve(tmp_path, *controller_args(kubeconfig), cert=files / "tls.crt", key=files / "tls.key",
                   ca=files / "ca.crt", verify=False) as served:
            with httpx.Client(verify=False, timeout=5) as client:
                answer = client.get(f"{served.url}/readyz")
            assert answer.status_code == 503  # the store has not synced either
            served.terminate()
            assert served.exit_code() == 0
    assert "reading Secret grove-system/webhook-certificate failed (cannot connect to the API server" in served.log_text()


def test_metrics_have_a_listener_of_their_own(tmp_path):
    metrics_port = free_port()
    with serve(tmp_path, "--objects", "examples/objects", "--metrics-port", str(metrics_port)) as served:
        context = ssl.create_default_context(cafile=served.ca)
        with httpx.Client(verify=context, timeout=5) as client:
            scraped = client.get(f"https://localhost:{metrics_port}/metrics")
            assert scraped.status_code == 200 and "webhook_requests_total" in scraped.text
            assert client.get(f"https://localhost:{metrics_port}/readyz").status_code == 404
        with served.client() as client:
            assert client.get("/metrics").status_code == 404
            assert client.get("/readyz").status_code == 200
        served.terminate()
        assert served.exit_code() == 0
        assert "Traceback" not in served.log_text()
