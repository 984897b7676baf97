"""The webhook's /metrics on a port of its own, scraped by a ServiceMonitor or a PodMonitor that
verifies its certificate in every certificate mode, with the CA of that mode."""

from __future__ import annotations

import base64

import pytest

from deploy.served import settings_from_env
from webhook.settings import ServeSettings

FULLNAME = "sharing-grove-sharing-webhook"
SERVICE_HOST = f"{FULLNAME}.grove-system.svc"
BUNDLE = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()
MODES = {
    "controller": ({}, {"secret": {"name": f"{FULLNAME}-certificate", "key": "ca.crt"}}),
    "selfSigned": ({"mode": "selfSigned"}, {"secret": {"name": f"{FULLNAME}-tls", "key": "ca.crt"}}),
    "certManager": ({"mode": "certManager"}, {"secret": {"name": f"{FULLNAME}-tls", "key": "ca.crt"}}),
    "existingSecret": ({"mode": "existingSecret", "existingSecret": {"name": "mine", "caBundle": BUNDLE}},
                       {"configMap": {"name": f"{FULLNAME}-ca", "key": "ca.crt"}}),
}
MONITORED = {"serviceMonitor": {"enabled": True}, "podMonitor": {"enabled": True}}


def endpoints(installed) -> list[dict]:
    return installed.one("ServiceMonitor")["spec"]["endpoints"] + installed.one("PodMonitor")["spec"]["podMetricsEndpoints"]


@pytest.mark.parametrize("mode", list(MODES))
def test_every_mode_s_monitors_verify_the_webhook_s_certificate_with_its_ca(render, mode):
    certificates, ca = MODES[mode]
    installed = render({"certificates": certificates, **MONITORED})
    https = [e for e in endpoints(installed) if e["scheme"] == "https"]
    assert len(https) == 2
    for endpoint in https:
        assert endpoint["port"] == "metrics" and endpoint["path"] == "/metrics"
        assert endpoint["tlsConfig"] == {"serverName": SERVICE_HOST, "ca": ca}


def test_existing_secret_mode_gives_the_monitors_the_ca_bundle_of_its_values(render):
    certificates, _ = MODES["existingSecret"]
    installed = render({"certificates": certificates, **MONITORED})
    assert installed.one("ConfigMap", f"{FULLNAME}-ca")["data"] == {"ca.crt": base64.b64decode(BUNDLE).decode()}
    assert render({"certificates": certificates}).of_kind("ConfigMap") == []


def test_the_certificate_covers_the_name_the_monitors_verify(default_install, monkeypatch):
    settings = settings_from_env(default_install.container("webhook"), ServeSettings, monkeypatch)
    assert SERVICE_HOST in settings.cert_hosts


def test_the_metrics_port_is_the_webhook_s_and_the_service_s(default_install, monkeypatch):
    container = default_install.container("webhook")
    settings = settings_from_env(container, ServeSettings, monkeypatch)
    port = next(p["containerPort"] for p in container["ports"] if p["name"] == "metrics")
    assert settings.metrics_port == port != settings.port
    service = {p["name"]: p for p in default_install.one("Service")["spec"]["ports"]}
    assert service["metrics"]["targetPort"] == "metrics"


def test_the_user_s_tls_settings_replace_the_chart_s(render):
    mine = {"ca": {"secret": {"name": "scrape-ca", "key": "ca.crt"}}, "serverName": "metrics.example"}
    installed = render({"serviceMonitor": {"enabled": True, "tlsConfig": mine}, "podMonitor": {"enabled": True, "tlsConfig": mine}})
    assert [e["tlsConfig"] for e in endpoints(installed) if e["scheme"] == "https"] == [mine, mine]


def test_the_reconciler_s_metrics_are_scraped_over_http_on_its_health_port(render):
    installed = render(MONITORED)
    http = [e for e in endpoints(installed) if e["scheme"] == "http"]
    assert [e["port"] for e in http] == ["reconciler", "reconciler"]
