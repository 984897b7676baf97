"""The three certificate modes give the API server a CA it can verify the serving certificate with."""

from __future__ import annotations

import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from deploy.helm import ChartTarget, HelmError

FULLNAME = "sharing-grove-sharing-webhook"
SECRET = f"{FULLNAME}-tls"
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


def test_self_signed_makes_a_ca_and_a_serving_certificate_for_the_service(default_install):
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


def test_self_signed_puts_its_ca_in_both_webhook_configurations(default_install):
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
        first = render({}, target=target)
        again = render({"replicaCount": 3}, target=target)
    finally:
        target.stop()
    stored = first.one("Secret", SECRET)["data"]
    assert again.one("Deployment")["spec"]["replicas"] == 3
    assert again.one("Secret", SECRET)["data"] == stored
    assert ca_bundles(again) == [stored["ca.crt"]] * 2


def test_self_signed_without_a_stored_secret_generates_a_new_ca(render):
    """What the lookup prevents: each render on its own makes a different CA."""
    target = ChartTarget()
    try:
        again = render({}, target=target)
    finally:
        target.stop()
    assert again.one("Secret", SECRET)["data"]["ca.crt"] != render({}).one("Secret", SECRET)["data"]["ca.crt"]


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
    secret = render({"webhooks": {"url": url}}).one("Secret", SECRET)
    cert = x509.load_pem_x509_certificate(pem(secret["data"]["tls.crt"]))
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == dns
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ips
