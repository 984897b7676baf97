"""The chart as the tier installs it: the README's release name and namespace, its webhooks pointed
at a local ``webhook serve`` (``webhooks.url``), the certificate the chart generated written out
as the kubelet would mount it, and PodCliqueSets decided by the validating webhook or, in the
namespaces labelled for it, by the ValidatingAdmissionPolicy alone."""

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

    def ca_bundle(self) -> bytes:
        return (self.certs / "ca.crt").read_bytes()


def serving_files(api: client.ApiClient, namespace: str, secret: str, directory: Path) -> Path:
    """The chart's certificate Secret, written out as the kubelet would mount it."""
    data = client.CoreV1Api(api).read_namespaced_secret(secret, namespace).data
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("ca.crt", "tls.crt", "tls.key"):
        (directory / name).write_bytes(base64.b64decode(data[name]))
    return directory
