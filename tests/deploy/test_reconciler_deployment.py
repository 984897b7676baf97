"""``reconciler.mode: deployment``: the reconciler in a Deployment of its own, sized, scheduled and
scaled apart from the webhook, with its own ServiceAccount, RBAC and disruption budget, and a
Service for its metrics; the webhook's pods then run the webhook alone."""

from __future__ import annotations

import pytest

from deploy.served import settings_from_env
from webhook.reconciler import ReconcileSettings

FULLNAME = "sharing-grove-sharing-webhook"
RECONCILER = f"{FULLNAME}-reconciler"
DEPLOYMENT = {"reconciler": {"mode": "deployment"}}


def deployment(installed, name: str) -> dict:
    return installed.one("Deployment", name)


def test_the_reconciler_runs_in_its_own_deployment_and_the_webhook_alone(render, default_install):
    installed = render(DEPLOYMENT)
    assert [c["name"] for c in deployment(installed, FULLNAME)["spec"]["template"]["spec"]["containers"]] == ["webhook"]
    pod = deployment(installed, RECONCILER)["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["reconciler"]
    sidecar = next(c for c in default_install.one("Deployment")["spec"]["template"]["spec"]["containers"] if c["name"] == "reconciler")
    assert pod["containers"][0]["env"] == sidecar["env"] and pod["containers"][0]["args"] == ["reconcile"]
    assert pod["serviceAccountName"] == RECONCILER


def test_the_two_deployments_select_apart(render):
    """Neither Deployment, Service nor disruption budget of one selects the other's pods."""
    installed = render(DEPLOYMENT)
    pods = {name: deployment(installed, name)["spec"]["template"]["metadata"]["labels"] for name in (FULLNAME, RECONCILER)}
    selectors = [(d["metadata"]["name"], d["spec"]["selector"]["matchLabels"]) for d in installed.of_kind("Deployment") + installed.of_kind("PodDisruptionBudget")]
    selectors += [(s["metadata"]["name"], s["spec"]["selector"]) for s in installed.of_kind("Service")]
    for owner, selector in selectors:
        matched = {name for name, labels in pods.items() if selector.items() <= labels.items()}
        assert matched == {owner}, (owner, matched)


def test_its_size_schedule_and_budget_are_its_own(render, monkeypatch):
    installed = render({"reconciler": {
        "mode": "deployment", "replicas": 3, "nodeSelector": {"pool": "system"},
        "tolerations": [{"key": "system", "operator": "Exists"}], "priorityClassName": "system-cluster-critical",
        "affinity": {"podAntiAffinity": {}}, "podAnnotations": {"a": "b"}, "podLabels": {"c": "d"},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
        "podDisruptionBudget": {"maxUnavailable": 1}, "serviceAccount": {"annotations": {"iam": "role"}},
    }, "resources": {"reconciler": {"requests": {"cpu": "1"}}}})
    spec = deployment(installed, RECONCILER)["spec"]
    pod = spec["template"]["spec"]
    assert spec["replicas"] == 3
    assert (pod["nodeSelector"], pod["priorityClassName"], pod["affinity"]) == ({"pool": "system"}, "system-cluster-critical", {"podAntiAffinity": {}})
    assert pod["tolerations"][0]["key"] == "system" and pod["topologySpreadConstraints"][0]["topologyKey"] == "zone"
    assert spec["template"]["metadata"]["annotations"] == {"a": "b"} and spec["template"]["metadata"]["labels"]["c"] == "d"
    assert pod["containers"][0]["resources"]["requests"]["cpu"] == "1"
    budget = installed.one("PodDisruptionBudget", RECONCILER)["spec"]
    assert budget["maxUnavailable"] == 1 and budget["selector"] == spec["selector"]
    assert installed.one("ServiceAccount", RECONCILER)["metadata"]["annotations"] == {"iam": "role"}
    settings = settings_from_env(pod["containers"][0], ReconcileSettings, monkeypatch)
    assert settings.leader_elect and settings.health_host == "0.0.0.0"


def test_its_metrics_have_a_service_and_both_monitors_scrape_both_components(render):
    installed = render({**DEPLOYMENT, "serviceMonitor": {"enabled": True}, "podMonitor": {"enabled": True}})
    service = installed.one("Service", RECONCILER)
    assert [p["name"] for p in service["spec"]["ports"]] == ["reconciler"]
    assert [p["name"] for p in installed.one("Service", FULLNAME)["spec"]["ports"]] == ["https", "metrics"]
    for kind in ("ServiceMonitor", "PodMonitor"):
        selector = installed.one(kind)["spec"]["selector"]
        names = selector["matchExpressions"][0]["values"]
        assert names == ["grove-sharing-webhook", "grove-sharing-webhook-reconciler"]
    assert {p["port"] for p in installed.one("PodMonitor")["spec"]["podMetricsEndpoints"]} == {"metrics", "reconciler"}


@pytest.mark.parametrize("values", [{"reconciler": {"mode": "deployment", "replicas": 1}},
                                    {"reconciler": {"mode": "deployment", "podDisruptionBudget": {"enabled": False}}}])
def test_no_budget_that_would_block_drains_or_was_not_asked_for(render, values):
    assert [b["metadata"]["name"] for b in render(values).of_kind("PodDisruptionBudget")] == [FULLNAME]


def test_sidecar_mode_makes_nothing_of_the_reconciler_apart(default_install):
    assert [d["metadata"]["name"] for d in default_install.of_kind("Deployment")] == [FULLNAME]
    assert [s["metadata"]["name"] for s in default_install.of_kind("Service")] == [FULLNAME]
