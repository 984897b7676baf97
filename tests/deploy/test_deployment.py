"""The Deployment runs the commands the package has, with options they accept and probes they serve."""

from __future__ import annotations

import urllib.request

import pytest
from prometheus_client import CollectorRegistry

from deploy.chart import values
from deploy.helm import HelmError
from deploy.served import call, settings_from_env
from webhook.cli import COMMANDS, options
from webhook.reconciler import ReconcileSettings
from webhook.reconciler.command import HealthServer
from webhook.settings import ServeSettings

SETTINGS = {command.name: command.settings for command in COMMANDS}


def pod_spec(installed) -> dict:
    return installed.one("Deployment")["spec"]["template"]["spec"]


def port_named(container: dict, name: str) -> int:
    return next(p["containerPort"] for p in container["ports"] if p["name"] == name)


def test_two_replicas_replaced_one_at_a_time_without_losing_capacity(default_install):
    spec = default_install.one("Deployment")["spec"]
    assert spec["replicas"] == 2
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}


def test_the_pods_are_spread_over_nodes_and_a_disruption_budget_keeps_one(default_install):
    selector = default_install.one("Deployment")["spec"]["selector"]
    assert pod_spec(default_install)["topologySpreadConstraints"] == [{
        "maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": selector,
    }]
    budget = default_install.one("PodDisruptionBudget")["spec"]
    assert budget == {"minAvailable": 1, "selector": selector}


@pytest.mark.parametrize("name", ["webhook", "reconciler"])
def test_each_container_runs_a_command_of_the_package(default_install, name):
    container = default_install.container(name)
    assert container["args"][0] in SETTINGS, f"{container['args']} is not a webhook command"


@pytest.mark.parametrize("name", ["webhook", "reconciler"])
def test_every_webhook_variable_is_an_option_of_the_containers_command(default_install, name):
    container = default_install.container(name)
    known = {option.env for option in options(SETTINGS[container["args"][0]])}
    used = {v["name"] for v in container["env"] if v["name"].startswith("WEBHOOK_")}
    assert used - known == set()


def test_the_webhook_container_environment_is_what_serve_accepts(default_install, monkeypatch):
    container = default_install.container("webhook")
    settings = settings_from_env(container, ServeSettings, monkeypatch)
    assert settings.host == "0.0.0.0"
    assert settings.port == port_named(container, "https") == values()["server"]["port"]
    assert settings.uses_cluster is False  # no KUBERNETES_SERVICE_HOST here; in a pod it is set
    assert (settings.strict, settings.on_missing_pcs, settings.keep_alive_timeout) == (False, "deny", 120)
    assert (settings.log_level, settings.log_format, settings.max_body_bytes) == ("info", "json", 8 * 1024 * 1024)
    assert settings.namespace == []
    assert settings.template_authorization == "enforce"
    assert settings.max_claims_per_owner == values()["reconciler"]["maxClaimsPerOwner"] == 10_000
    assert (settings.max_header_bytes, settings.max_held_bytes, settings.write_timeout) == (1024 * 1024, 64 * 1024 * 1024, 10)
    assert settings.max_connections == values()["server"]["maxConnections"] == 1000


def test_server_values_reach_the_server(render, monkeypatch):
    installed = render({"server": {
        "port": 9443, "strict": True, "onMissingPcs": "allow", "logLevel": "debug", "logFormat": "text",
        "keepAliveTimeout": 75, "maxBodyBytes": 1048576, "accessLog": True, "namespaces": ["team-a", "team-b"],
        "templateAuthorization": "warn", "maxHeaderBytes": 65536, "maxHeldBytes": 134217728, "writeTimeout": 2.5,
        "maxConnections": 500,
    }})
    container = installed.container("webhook")
    settings = settings_from_env(container, ServeSettings, monkeypatch)
    assert (settings.port, port_named(container, "https")) == (9443, 9443)
    assert (settings.strict, settings.on_missing_pcs, settings.access_log) == (True, "allow", True)
    assert (settings.log_level, settings.log_format) == ("debug", "text")
    assert (settings.keep_alive_timeout, settings.max_body_bytes) == (75, 1048576)
    assert settings.namespace == ["team-a", "team-b"]
    assert settings.template_authorization == "warn"
    assert (settings.max_header_bytes, settings.max_held_bytes, settings.write_timeout) == (65536, 128 * 1024 * 1024, 2.5)
    assert settings.max_connections == 500


def test_the_chart_refuses_a_budget_too_small_for_one_body(render):
    """The server would refuse to start; the chart says so at install instead."""
    with pytest.raises(HelmError) as refused:
        render({"server": {"maxBodyBytes": 8388608, "maxHeldBytes": 8388608}})
    assert "server.maxHeldBytes (8388608) must be at least 4/3 of server.maxBodyBytes (8388608)" in str(refused.value)
    assert render({"server": {"maxBodyBytes": 6291456, "maxHeldBytes": 8388608}})


def test_the_certificate_files_are_read_from_the_mounted_secret(render, monkeypatch):
    """In the modes where Helm, cert-manager or the user make the Secret (controller mode:
    test_certificates.py)."""
    default_install = render({"certificates": {"mode": "selfSigned"}})
    container = default_install.container("webhook")
    settings = settings_from_env(container, ServeSettings, monkeypatch)
    mount = next(m for m in container["volumeMounts"] if m["name"] == "tls")
    assert mount["readOnly"] is True
    assert settings.tls_cert.parent.as_posix() == settings.tls_key.parent.as_posix() == mount["mountPath"]
    assert (settings.tls_cert.name, settings.tls_key.name) == ("tls.crt", "tls.key")
    volume = next(v for v in pod_spec(default_install)["volumes"] if v["name"] == "tls")
    assert volume["secret"]["secretName"] == "sharing-grove-sharing-webhook-tls"


@pytest.mark.parametrize(("probe", "path"), [("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")])
def test_the_webhook_probes_are_https_gets_the_server_answers(default_install, monkeypatch, probe, path):
    container = default_install.container("webhook")
    get = container[probe]["httpGet"]
    assert get == {"path": path, "port": "https", "scheme": "HTTPS"}
    settings = settings_from_env(container, ServeSettings, monkeypatch)
    response = call(settings, "GET", path)
    assert response.status_code == 200, response.text


def test_the_reconciler_container_environment_is_what_reconcile_accepts(default_install, monkeypatch):
    container = default_install.container("reconciler")
    settings = settings_from_env(container, ReconcileSettings, monkeypatch)
    assert (settings.health_host, settings.health_port) == ("0.0.0.0", port_named(container, "reconciler"))
    assert settings.health_port == values()["reconciler"]["healthPort"]
    assert settings.leader_elect is True
    assert settings.leader_election_id == "sharing-grove-sharing-webhook-reconciler"
    assert (settings.workers, settings.resync_period, settings.namespace) == (2, 300, [])
    assert settings.max_claims_per_owner == 10_000
    assert (settings.log_level, settings.log_format) == ("info", "json")


def test_reconciler_values_reach_the_reconciler(render, monkeypatch):
    installed = render({"reconciler": {
        "leaderElect": False, "healthPort": 9090, "resyncPeriod": 60, "workers": 8, "logLevel": "debug",
        "logFormat": "text", "namespaces": ["team-a", "team-b"], "maxClaimsPerOwner": 200_000,
    }})
    container = installed.container("reconciler")
    settings = settings_from_env(container, ReconcileSettings, monkeypatch)
    assert (settings.health_port, port_named(container, "reconciler")) == (9090, 9090)
    assert (settings.leader_elect, settings.resync_period, settings.workers) == (False, 60, 8)
    assert (settings.log_level, settings.log_format, settings.namespace) == ("debug", "text", ["team-a", "team-b"])
    assert settings.max_claims_per_owner == 200_000
    assert settings_from_env(installed.container("webhook"), ServeSettings, monkeypatch).max_claims_per_owner == 200_000


def test_the_reconciler_is_probed_for_liveness_only_on_a_path_its_health_server_answers(default_install):
    """Pod readiness is every container's: a reconciler standing by must not take the webhook out."""
    container = default_install.container("reconciler")
    assert "readinessProbe" not in container
    get = container["livenessProbe"]["httpGet"]
    assert get == {"path": "/healthz", "port": "reconciler"}
    health = HealthServer("127.0.0.1", 0, lambda: "not leading", CollectorRegistry())
    health.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{health.port}{get['path']}", timeout=5) as answer:
            assert answer.status == 200
    finally:
        health.stop()


def test_sigterm_comes_at_once_and_the_webhook_drains_itself_before_the_kubelet_kills_it(default_install):
    """No preStop sleep: during one the server would not know it is going, so kept-alive clients
    would keep their connections to it. The server's own delay fails readiness and closes every
    connection after its response while the endpoint leaves the Service (5 to 10 s), then drains."""
    container = default_install.container("webhook")
    assert "lifecycle" not in container
    env = {v["name"]: v["value"] for v in container["env"]}
    delay, drain = float(env["WEBHOOK_SHUTDOWN_DELAY"]), float(env["WEBHOOK_DRAIN_TIMEOUT"])
    assert 5 <= delay <= 10
    assert pod_spec(default_install)["terminationGracePeriodSeconds"] > delay + drain


def test_a_grace_period_shorter_than_the_drain_is_refused(render):
    with pytest.raises(HelmError) as refused:
        render({"terminationGracePeriodSeconds": 15, "server": {"shutdownDelay": 5, "drainTimeout": 10}})
    assert "terminationGracePeriodSeconds (15) must be more than server.shutdownDelay + server.drainTimeout (15)" in str(refused.value)
    assert render({"terminationGracePeriodSeconds": 16, "server": {"shutdownDelay": 5, "drainTimeout": 10.5}})


@pytest.mark.parametrize("name", ["webhook", "reconciler"])
def test_each_container_runs_restricted(default_install, name):
    pod = pod_spec(default_install)["securityContext"]
    assert pod["runAsNonRoot"] is True and pod["runAsUser"] > 0
    assert pod["seccompProfile"] == {"type": "RuntimeDefault"}
    container = default_install.container(name)["securityContext"]
    assert container["readOnlyRootFilesystem"] is True
    assert container["allowPrivilegeEscalation"] is False
    assert container["capabilities"] == {"drop": ["ALL"]}
    assert container["runAsNonRoot"] is True


def test_the_reconciler_can_be_left_out(render):
    installed = render({"reconciler": {"enabled": False}})
    assert [c["name"] for c in pod_spec(installed)["containers"]] == ["webhook"]
    assert [p["name"] for p in installed.one("Service")["spec"]["ports"]] == ["https", "metrics"]


def test_scheduling_values_reach_the_pod(render):
    installed = render({
        "nodeSelector": {"node-role": "infra"},
        "tolerations": [{"key": "infra", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
        "topologySpreadConstraints": [{"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
        "priorityClassName": "system-cluster-critical",
        "imagePullSecrets": [{"name": "regcred"}],
        "podAnnotations": {"team": "platform"},
        "podLabels": {"cost-center": "gpu"},
    })
    pod = pod_spec(installed)
    assert pod["nodeSelector"] == {"node-role": "infra"}
    assert pod["tolerations"][0]["key"] == "infra"
    assert pod["affinity"]["nodeAffinity"]
    assert pod["topologySpreadConstraints"] == [{"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]
    assert pod["priorityClassName"] == "system-cluster-critical"
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]
    template = installed.one("Deployment")["spec"]["template"]["metadata"]
    assert template["annotations"] == {"team": "platform"}
    assert template["labels"]["cost-center"] == "gpu"


def test_a_single_replica_gets_no_disruption_budget_that_would_block_drains(render):
    assert render({"replicaCount": 1}).of_kind("PodDisruptionBudget") == []
    assert render({"podDisruptionBudget": {"enabled": False}}).of_kind("PodDisruptionBudget") == []
