"""The chart as GitOps tools and platform teams drive it, with the real ``helm``:

- ``helm template`` (what Argo CD renders) gives the same output twice in the default mode;
- ``helm upgrade`` of the session's release writes nothing with the same values, and with one value
  changed changes that alone: the Secret and the caBundles the webhook wrote are left as they are;
- the chart installs as a subchart of an umbrella chart with ``global`` values.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from cluster.release import CHART, Release
from cluster.tools import Tool

Obj = dict[str, Any]


def objects(kubectl: Tool, helm: Tool, release: Release, directory: Path) -> dict[tuple[str, str], Obj]:
    """Every object of the release as the API server holds it, by (kind, name)."""
    manifest = directory / "manifest.yaml"
    manifest.write_text(helm("get", "manifest", release.name, "--namespace", release.namespace).stdout)
    found = json.loads(kubectl("get", "-f", str(manifest), "-o", "json").stdout)["items"]
    return {(obj["kind"], obj["metadata"]["name"]): obj for obj in found}


def versions(found: dict[tuple[str, str], Obj]) -> dict[tuple[str, str], str]:
    return {key: obj["metadata"]["resourceVersion"] for key, obj in found.items()}


def test_helm_template_renders_the_same_twice(helm: Tool) -> None:
    render = ("template", "grove-sharing-webhook", str(CHART), "--namespace", "grove-sharing-webhook")
    assert helm(*render).stdout == helm(*render).stdout


def test_an_upgrade_changes_nothing_it_should_not(kubectl: Tool, helm: Tool, release: Release, tmp_path: Path) -> None:
    upgrade = ("upgrade", release.name, str(CHART), "--namespace", release.namespace, *release.values)
    before = objects(kubectl, helm, release, tmp_path)
    assert before[("Secret", release.secret)]["data"], "the webhook filled its Secret"
    helm(*upgrade)
    assert versions(objects(kubectl, helm, release, tmp_path)) == versions(before), "an upgrade with the same values wrote something"
    try:
        helm(*upgrade, "--set", "webhooks.mutating.timeoutSeconds=12")
        after = objects(kubectl, helm, release, tmp_path)
        changed = {key for key, version in versions(after).items() if version != versions(before)[key]}
        assert changed == {("MutatingWebhookConfiguration", release.fullname)}
        mutating = after[("MutatingWebhookConfiguration", release.fullname)]["webhooks"][0]
        assert mutating["timeoutSeconds"] == 12
        assert mutating["clientConfig"]["caBundle"] == before[("MutatingWebhookConfiguration", release.fullname)]["webhooks"][0]["clientConfig"]["caBundle"]
    finally:
        helm(*upgrade)


def test_the_chart_installs_as_a_subchart_with_global_values(admin: client.ApiClient, helm: Tool, tmp_path: Path) -> None:
    umbrella = tmp_path / "platform"
    shutil.copytree(CHART, umbrella / "charts" / CHART.name)
    version = yaml.safe_load((CHART / "Chart.yaml").read_text())["version"]
    (umbrella / "Chart.yaml").write_text(yaml.safe_dump({"apiVersion": "v2", "name": "platform", "version": "1.0.0", "dependencies": [
        {"name": CHART.name, "version": version, "condition": f"{CHART.name}.enabled"}]}))
    nothing = {"matchLabels": {"kubernetes.io/metadata.name": "rs-platform"}}
    values = {"global": {"imageRegistry": "mirror.example.com"}, CHART.name: {
        "enabled": True, "webhooks": {"url": "https://127.0.0.1:9", "validating": {"namespaceSelector": nothing},
                                      "mutating": {"namespaceSelector": nothing}},
        "unregisterHook": {"enabled": False}}}
    (umbrella / "values.yaml").write_text(yaml.safe_dump(values))
    helm("install", "platform", str(umbrella), "--namespace", "rs-platform-system", "--create-namespace")
    try:
        registration = client.AdmissionregistrationV1Api(admin)
        assert registration.read_validating_webhook_configuration("platform-grove-sharing-webhook").webhooks
        secret = client.CoreV1Api(admin).read_namespaced_secret("platform-grove-sharing-webhook-certificate", "rs-platform-system")
        assert secret.type == "Opaque" and not secret.data
    finally:
        helm("uninstall", "platform", "--namespace", "rs-platform-system")
