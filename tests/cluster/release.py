"""The chart as the tier installs it: the README's release name and namespace, its webhooks pointed
at a local ``webhook serve`` (``webhooks.url``), the certificate the chart generated written out
as the kubelet would mount it."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

from kubernetes import client

from cluster.processes import WebhookServer

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "grove-sharing-webhook"
RELEASE = NAMESPACE = "grove-sharing-webhook"
"""The README's release name and namespace."""


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

    def ca_bundle(self) -> bytes:
        return (self.certs / "ca.crt").read_bytes()


def serving_files(api: client.ApiClient, namespace: str, secret: str, directory: Path) -> Path:
    """The chart's certificate Secret, written out as the kubelet would mount it."""
    data = client.CoreV1Api(api).read_namespaced_secret(secret, namespace).data
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("ca.crt", "tls.crt", "tls.key"):
        (directory / name).write_bytes(base64.b64decode(data[name]))
    return directory
