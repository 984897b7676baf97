"""The four certificate modes give the API server a CA it can verify the serving certificate with:
the webhook's own controller (the default), or one made at render time, by cert-manager or by you."""

from __future__ import annotations

import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from deploy.chart import CHART
from deploy.helm import ChartTarget, HelmError
from deploy.served import settings_from_env
from webhook.settings import ServeSettings

FULLNAME = "sharing-grove-sharing-webhook"
SECRET = f"{FULLNAME}-tls"
CONTROLLER_SECRET = f"{FULLNAME}-certificate"
SELF_SIGNED = {"certificates": {"mode": "selfSigned"}}
SERVICE_NAMES = [FULLNAME, f"{FULLNAME}.grove-system", f"{FULLNAME}.grove-system.svc",
                 f"{FULLNAME}.grove-system.svc.cluster.local"]
CONFIGURATIONS = ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]


def pem(data: str) -> bytes:
    return base64.b64decode(data)


def ca_bundles(installed) -> list[str | None]:
    return [installed.one(kind)["webhooks"][0]["clientConfig"].get("caBundle") for kind in CONFIGURATIONS]


def mounted_secret(installed) -> str:
    volumes = installed.one("Deployment")["spec"]["template"]["spec"]["volumes"]
    return next(v["secret"]["secretName"] for v in volumes if v["name"] == "tls")


def test_the_controller_mode_is_the_default_and_renders_an_empty_secret(default_install):
    """The webhook fills it; no manifest ever holds its data, so neither ``helm upgrade`` nor an
    Argo CD sync (three-way merges) takes away what the webhook wrote."""
    secret = default_install.one("Secret")
    assert secret["metadata"]["name"] == CONTROLLER_SECRET
    assert secret["type"] == "Opaque"
    assert "data" not in secret and "stringData" not in secret


def test_the_controller_mode_leaves_the_ca_bundles_to_the_webhook(default_install):
    assert ca_bundles(default_install) == [None, None]
    for kind in CONFIGURATIONS:
        assert "annotations" not in default_install.one(kind)["metadata"]


def test_the_controller_mode_gives_the_webhook_its_secret_configurations_and_names(default_install, monkeypatch):
    container = default_install.container("webhook")
    settings = settings_from_env(container, ServeSettings, monkeypatch)
    assert (settings.cert_secret, settings.cert_secret_namespace) == (CONTROLLER_SECRET, "grove-system")
    assert settings.webhook_configuration == default_install.one("ValidatingWebhookConfiguration")["metadata"]["name"]
    assert settings.webhook_configuration == default_install.one("MutatingWebhookConfiguration")["metadata"]["name"]
    assert settings.cert_hosts == SERVICE_NAMES
    assert (settings.cert_validity, settings.cert_check_interval) == (90 * 86400, 10)


def test_the_controller_mode_writes_the_pair_into_memory_not_the_root_filesystem(default_install, monkeypatch):
    container = default_install.container("webhook")
    settings = settings_from_env(container, ServeSettings, monkeypatch)
    mount = next(m for m in container["volumeMounts"] if m["name"] == "tls")
    assert mount["readOnly"] is False and container["securityContext"]["readOnlyRootFilesystem"] is True
    assert settings.tls_cert.parent.as_posix() == settings.tls_key.parent.as_posix() == mount["mountPath"]
    volumes = default_install.one("Deployment")["spec"]["template"]["spec"]["volumes"]
    assert next(v for v in volumes if v["name"] == "tls") == {"name": "tls", "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"}}


@pytest.mark.parametrize(("url", "hosts"), [
    ("https://127.0.0.1:9443", [*SERVICE_NAMES, "127.0.0.1"]),
    ("https://dev.example.com:9443", [*SERVICE_NAMES, "dev.example.com"]),
])
def test_the_controller_certificate_covers_the_host_of_a_server_outside_the_cluster(render, url, hosts):
    installed = render({"webhooks": {"url": url}})
    assert installed.one("Secret")["metadata"]["name"] == CONTROLLER_SECRET
    assert f"--cert-hosts {hosts[-1]}" in installed.notes


def test_the_controller_mode_renders_the_same_every_time(helm):
    """What ``helm template`` gives Argo CD: two installs into empty clusters, the same documents."""
    first, second = (helm.install(CHART, {}) for _ in range(2))
    assert first.documents == second.documents


def test_self_signed_renders_a_new_ca_each_time_without_a_cluster(helm):
    """Why it is no longer the default: each render on its own makes a different CA."""
    first, second = (helm.install(CHART, SELF_SIGNED) for _ in range(2))
    assert first.one("Secret")["data"]["ca.crt"] != second.one("Secret")["data"]["ca.crt"]


def test_self_signed_makes_a_ca_and_a_serving_certificate_for_the_service(render):
    default_install = render(SELF_SIGNED)
    secret = default_install.one("Secret", SECRET)
    assert secret["type"] == "kubernetes.io/tls"
    ca = x509.load_pem_x509_certificate(pem(secret["data"]["ca.crt"]))
    cert = x509.load_pem_x509_certificate(pem(secret["data"]["tls.crt"]))
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    cert.verify_directly_issued_by(ca)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == SERVICE_NAMES
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = load_pem_private_key(pem(secret["data"]["tls.key"]), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1"
    assert key.public_key() == cert.public_key()


def test_self_signed_puts_its_ca_in_both_webhook_configurations(render):
    default_install = render(SELF_SIGNED)
    secret = default_install.one("Secret", SECRET)
    assert ca_bundles(default_install) == [secret["data"]["ca.crt"]] * 2
    assert mounted_secret(default_install) == SECRET
    for kind in CONFIGURATIONS:
        assert "annotations" not in default_install.one(kind)["metadata"]


def test_self_signed_keeps_the_stored_certificate_on_upgrade(render):
    """A second install over the objects of the first reads the Secret back with ``lookup``, as
    ``helm upgrade`` does, and renders the same certificate and CA bundles."""
    target = ChartTarget()
    try:
        first = render(SELF_SIGNED, target=target)
        again = render({**SELF_SIGNED, "replicaCount": 3}, target=target)
    finally:
        target.stop()
    stored = first.one("Secret", SECRET)["data"]
    assert again.one("Deployment")["spec"]["replicas"] == 3
    assert again.one("Secret", SECRET)["data"] == stored
    assert ca_bundles(again) == [stored["ca.crt"]] * 2


def test_cert_manager_builds_a_ca_chain_and_injects_its_ca(render):
    installed = render({"certificates": {"mode": "certManager"}})
    assert installed.of_kind("Secret") == []
    root = installed.one("Issuer", f"{FULLNAME}-selfsigned")
    assert root["spec"] == {"selfSigned": {}}
    ca = installed.one("Certificate", f"{FULLNAME}-ca")["spec"]
    assert ca["isCA"] is True and ca["issuerRef"]["name"] == f"{FULLNAME}-selfsigned"
    ca_issuer = installed.one("Issuer", f"{FULLNAME}-ca")
    assert ca_issuer["spec"] == {"ca": {"secretName": ca["secretName"]}}
    serving = installed.one("Certificate", SECRET)
    assert serving["spec"]["secretName"] == mounted_secret(installed) == SECRET
    assert serving["spec"]["dnsNames"] == SERVICE_NAMES
    assert serving["spec"]["issuerRef"] == {"name": f"{FULLNAME}-ca", "kind": "Issuer", "group": "cert-manager.io"}
    for kind in CONFIGURATIONS:
        annotations = installed.one(kind)["metadata"]["annotations"]
        assert annotations == {"cert-manager.io/inject-ca-from": f"grove-system/{SECRET}"}
    assert ca_bundles(installed) == [None, None]


def test_cert_manager_with_the_users_issuer_creates_no_issuer(render):
    issuer = {"name": "corp-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}
    installed = render({"certificates": {"mode": "certManager", "certManager": {"issuerRef": issuer}}})
    assert installed.of_kind("Issuer") == []
    assert [c["metadata"]["name"] for c in installed.of_kind("Certificate")] == [SECRET]
    assert installed.one("Certificate")["spec"]["issuerRef"] == issuer


def test_an_existing_secret_is_mounted_and_its_ca_bundle_registered(render):
    bundle = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n").decode()
    installed = render({"certificates": {"mode": "existingSecret",
                                         "existingSecret": {"name": "webhook-tls", "caBundle": bundle}}})
    assert installed.of_kind("Secret") == [] and installed.of_kind("Certificate") == []
    assert mounted_secret(installed) == "webhook-tls"
    assert ca_bundles(installed) == [bundle, bundle]


@pytest.mark.parametrize(
    ("certificates", "message"),
    [
        ({"mode": "existingSecret", "existingSecret": {"caBundle": "Zm9v"}},
         "certificates.existingSecret.name is required in existingSecret mode"),
        ({"mode": "existingSecret", "existingSecret": {"name": "webhook-tls"}},
         "certificates.existingSecret.caBundle is required in existingSecret mode"),
    ],
    ids=["existing secret without a name", "existing secret without a CA bundle"],
)
def test_incomplete_certificate_settings_stop_the_install_with_a_clear_message(render, certificates, message):
    with pytest.raises(HelmError, match=message.replace(".", r"\.")):
        render({"certificates": certificates})


def test_a_cluster_without_resource_k8s_io_v1_is_refused(render):
    target = ChartTarget(version=("1", "33"))
    try:
        with pytest.raises(HelmError, match="chart requires kubeVersion: >=1.34.0-0"):
            render({}, target=target)
    finally:
        target.stop()


@pytest.mark.parametrize(("url", "dns", "ips"), [
    ("https://127.0.0.1:9443", SERVICE_NAMES, ["127.0.0.1"]),
    ("https://dev.example.com:9443", [*SERVICE_NAMES, "dev.example.com"], []),
])
def test_self_signed_covers_the_host_of_a_server_outside_the_cluster(render, url, dns, ips):
    secret = render({**SELF_SIGNED, "webhooks": {"url": url}}).one("Secret", SECRET)
    cert = x509.load_pem_x509_certificate(pem(secret["data"]["tls.crt"]))
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == dns
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ips
