"""The chart's alerts and dashboard: the PrometheusRule passes ``promtool check rules``, every alert
fires on series that should make it fire and stays quiet otherwise (``promtool test rules`` on
``alert_cases.yaml``), each names a runbook section that docs/operations.md has, and every metric
the rules and the dashboard read is one the webhook server or the reconciler exports.

promtool is Prometheus' own, built by ``make controlplane`` beside the control plane
(``KUBEBUILDER_ASSETS``), or found on PATH; without it the promtool tests are skipped, saying so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from deploy.chart import CHART, ROOT
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.server.limits import Budget, Lifecycle
from webhook.server.metrics import ServerMetrics
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

NAMESPACE = "grove-system"
CASES = Path(__file__).with_name("alert_cases.yaml")
DASHBOARD = CHART / "dashboards" / "grove-sharing-webhook.json"
_LABEL = re.compile(r"\{\{ \$labels\.(\w+) \}\}")
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count")}
"""The series a metric family is exposed as (labelled families have none before their first use)."""


@pytest.fixture(scope="module")
def rules(render: Any) -> list[dict[str, Any]]:
    installed = render({"prometheusRule": {"enabled": True}, "grafanaDashboard": {"enabled": True}}, namespace=NAMESPACE)
    groups: list[dict[str, Any]] = installed.one("PrometheusRule")["spec"]["groups"]
    return groups


def promtool() -> str:
    assets = os.environ.get("KUBEBUILDER_ASSETS")
    found = str(Path(assets) / "promtool") if assets and (Path(assets) / "promtool").is_file() else shutil.which("promtool")
    if found is None:
        pytest.skip("no promtool: run 'make controlplane' (it builds Prometheus' promtool) or put promtool on PATH")
    return found


def test_the_rules_pass_promtools_check(rules: list[dict[str, Any]], tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": rules}))
    done = subprocess.run([promtool(), "check", "rules", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def expected_annotations(rules: list[dict[str, Any]], cases: dict[str, Any]) -> dict[str, Any]:
    """``cases`` with each expected alert's annotations: the rule's, with its labels filled in."""
    by_name = {r["alert"]: r for group in rules for r in group["rules"]}
    for test in cases["tests"]:
        for check in test["alert_rule_test"]:
            rule = by_name[check["alertname"]]
            for alert in check["exp_alerts"]:
                labels = alert["exp_labels"]
                alert["exp_annotations"] = {k: _LABEL.sub(lambda m: labels[m[1]], v) for k, v in rule["annotations"].items()}
    return cases


def test_every_alert_fires_when_it_should_and_only_then(rules: list[dict[str, Any]], tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rules}))
    cases = expected_annotations(rules, yaml.safe_load(CASES.read_text()))
    cases["rule_files"] = ["rules.yaml"]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases))
    done = subprocess.run([promtool(), "test", "rules", "cases.yaml"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    tested = {check["alertname"] for test in cases["tests"] for check in test["alert_rule_test"]}
    assert tested == {r["alert"] for group in rules for r in group["rules"]}, "an alert without a unit test"


def test_each_alert_has_a_severity_and_names_a_runbook_section_of_operations_md(rules: list[dict[str, Any]]) -> None:
    headings = set(re.findall(r"^#+ (.+)$", (ROOT / "docs" / "operations.md").read_text(), re.M))
    for rule in (r for group in rules for r in group["rules"]):
        assert rule["labels"]["severity"] in ("warning", "critical"), rule["alert"]
        assert rule["annotations"]["summary"], rule["alert"]
        section = re.search(r'Runbook: docs/operations\.md, "(.+?)"', rule["annotations"]["description"].replace("\n", " "))
        assert section and section[1] in headings, f"{rule['alert']}: no runbook section {section and section[1]!r}"


class ClusterStore(EmbeddedStore):
    """The metrics' view of the cluster store: an embedded one that also counts SubjectAccessReviews."""

    def template_access(self) -> Any:
        raise NotImplementedError

    def template_lookup(self) -> Any:
        raise NotImplementedError

    def template_reviews(self) -> dict[str, int]:
        return {}


def exported() -> set[str]:
    """Every series name the webhook server (with the cluster store, as in the chart) and the
    reconciler expose on ``/metrics``."""
    server = ServerMetrics(ClusterStore.of([]), Lifecycle(), Budget(ServeSettings().max_held_bytes))
    names = set()
    for registry in (server.registry, ReconcilerMetrics().registry):
        for family in registry.collect():
            names |= {family.name + suffix for suffix in SUFFIXES.get(family.type, ("",))}
    return names


def read_metrics(expression: str) -> set[str]:
    names = set(re.findall(r"\b([a-z_][a-z0-9_]*)\s*\{", expression))
    return {n for n in names if n.startswith(("webhook_", "grove_sharing_", "process_"))}


def test_every_metric_the_rules_and_the_dashboard_read_is_exported(rules: list[dict[str, Any]]) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    expressions = [r["expr"] for group in rules for r in group["rules"]]
    expressions += [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    read = set().union(*(read_metrics(e) for e in expressions))
    assert len(read) >= 10
    assert read - exported() == set()


def test_the_dashboard_is_in_the_configmap_grafana_loads(render: Any) -> None:
    installed = render({"grafanaDashboard": {"enabled": True}}, namespace=NAMESPACE)
    configmap = installed.one("ConfigMap")
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(configmap["data"]["grove-sharing-webhook.json"]) == json.loads(DASHBOARD.read_text())


def test_without_a_reconciler_its_alerts_are_left_out(render: Any) -> None:
    installed = render({"prometheusRule": {"enabled": True}, "reconciler": {"enabled": False}}, namespace=NAMESPACE)
    alerts = {r["alert"] for group in installed.one("PrometheusRule")["spec"]["groups"] for r in group["rules"]}
    assert "GroveSharingReconcilerNoLeader" not in alerts and "GroveSharingWebhookDown" in alerts
