"""The chart as the tier installs it: the README's release name and namespace (or another release
of a test's own), its webhooks pointed at a local ``webhook serve`` (``webhooks.url``) that keeps
its own certificate, as the chart's default controller mode has the pods do, and PodCliqueSets
decided by the validating webhook or, in the namespaces labelled for it, by the
ValidatingAdmissionPolicy alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kubernetes import client

from cluster import kube
from cluster.controlplane import ControlPlane
from cluster.ports import free_port
from cluster.processes import WebhookServer, certificate_controller
from cluster.tools import Tool

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "grove-sharing-webhook"
RELEASE = NAMESPACE = "grove-sharing-webhook"
"""The README's release name and namespace."""
DECIDED_BY = "grove-sharing-webhook.test/decided-by"
"""A namespace label: ``policy``, only the ValidatingAdmissionPolicy decides its PodCliqueSets;
``nobody``, nothing validates them. Without it, the validating webhook decides."""
VALIDATION = [
    "--set", "validation.mode=both",
    "--set-json", f'webhooks.validating.namespaceSelector={{"matchExpressions":[{{"key":"{DECIDED_BY}","operator":"DoesNotExist"}}]}}',
    "--set-json", f'validation.policy.namespaceSelector={{"matchLabels":{{"{DECIDED_BY}":"policy"}}}}',
]
"""The release validates with both the webhook and the policy (``validation.mode`` both), in
namespaces apart, so that each namespace has one of them alone."""


@dataclass
class Release:
    """The chart installed into the API server with its webhooks calling ``server``."""

    name: str
    namespace: str
    values: list[str]
    server: WebhookServer
    certs: Path
    kubeconfig: Path
    """The chart's ServiceAccount, with a token from the TokenRequest API."""

    @property
    def fullname(self) -> str:
        """The name of its objects: its webhook configurations, ServiceAccount, roles."""
        return self.name if "grove-sharing-webhook" in self.name else f"{self.name}-grove-sharing-webhook"

    @property
    def secret(self) -> str:
        """The certificate Secret the server keeps (controller mode)."""
        return f"{self.fullname}-certificate"

    def ca_bundle(self) -> bytes:
        """The CAs the server wrote beside its certificate: the Secret's bundle."""
        return (self.certs / "ca.crt").read_bytes()

    def server_at(self, port: int, directory: Path, log: Path, *extra: str) -> WebhookServer:
        """A ``serve`` replica of the release on ``port`` keeping the release's certificate, its
        files in ``directory``."""
        options = certificate_controller(self.fullname, self.namespace, "127.0.0.1", *extra)
        return WebhookServer(port, directory / "tls.crt", directory / "tls.key", directory / "ca.crt", self.kubeconfig, log, options)


def install(helm: Tool, admin: client.ApiClient, control_plane: ControlPlane, name: str, namespace: str,
            workdir: Path, *values: str) -> Release:
    """``helm install`` of the chart as ``name`` in ``namespace`` with ``values``, its webhooks
    calling a server (not started) that runs as the release's ServiceAccount."""
    port = free_port()
    given = ["--set", f"webhooks.url=https://127.0.0.1:{port}", *values]
    helm("install", name, str(CHART), "--namespace", namespace, "--create-namespace", *given)
    release = Release(name, namespace, given, None, workdir / "certs", workdir / "kubeconfig")  # type: ignore[arg-type]
    token = kube.service_account_token(admin, namespace, release.fullname)
    release.kubeconfig = control_plane.token_kubeconfig(f"{name}-webhook", token)
    release.server = release.server_at(port, release.certs, workdir / "serve.log")
    return release
