"""The certificate controller of ``serve --cert-secret``, replica by replica, against an API server:
it fills the chart's empty Secret, writes its CA into both webhook configurations, serves a new
certificate only once that CA has been trusted for a moment, renews two thirds through the
lifetime with the old CA kept, lets one replica's write win, repairs what was edited by hand, and
says what is wrong in one line when it cannot."""

from __future__ import annotations

import base64
import logging
from pathlib import Path

import pytest
from fakeapi import CuttableProxy, FakeApiServer, new_api_client
from kubernetes import client

from certificates.harness import CONFIGURATION, NAMESPACE, SECRET, Clocks, Replica, bundles, cas, install, secret_data
from webhook.certificates.trust import TRUST_DELAY

DAY = 86400.0


@pytest.fixture
def cluster(fake_api: FakeApiServer) -> FakeApiServer:
    install(fake_api)
    return fake_api


@pytest.fixture
def clocks() -> Clocks:
    return Clocks()


def replica(kube: client.ApiClient, tmp_path: Path, clocks: Clocks, name: str = "a") -> Replica:
    return Replica(kube, tmp_path / name, clocks)


def test_the_first_replica_fills_the_empty_secret_and_both_configurations(cluster, kube_api_client, tmp_path, clocks):
    one = replica(kube_api_client, tmp_path, clocks)
    one.start()
    stored = secret_data(cluster)
    assert set(stored) == {"ca.crt", "tls.crt", "tls.key"}
    assert one.served() == stored["tls.crt"] and one.files.ca.read_bytes() == stored["ca.crt"]
    assert bundles(cluster) == [stored["ca.crt"]] * 4
    assert one.controller.readiness() == "the CA of the serving certificate is not yet in both webhook configurations"
    clocks.advance(TRUST_DELAY)
    assert one.controller.readiness() is None


def test_the_controller_touches_only_its_secret_and_the_two_configurations(cluster, kube_api_client, tmp_path, clocks):
    one = replica(kube_api_client, tmp_path, clocks)
    one.start()
    assert set(one.api.access.calls) == {("", "secrets", "get"), ("", "secrets", "update"),
                                         ("admissionregistration.k8s.io", "validatingwebhookconfigurations", "get"),
                                         ("admissionregistration.k8s.io", "validatingwebhookconfigurations", "update"),
                                         ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "get"),
                                         ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "update")}


def test_every_replica_serves_the_one_certificate_the_first_wrote(cluster, kube_api_client, tmp_path, clocks):
    first, second = replica(kube_api_client, tmp_path, clocks, "a"), replica(kube_api_client, tmp_path, clocks, "b")
    first.start()
    second.start()
    assert first.served() == second.served() == secret_data(cluster)["tls.crt"]
    assert (first.controller.secret.renewals, second.controller.secret.renewals) == (1, 0)


def test_of_two_replicas_renewing_at_once_one_write_wins(cluster, kube_api_client, tmp_path, clocks):
    """The second replica's write, made from what it read before the first wrote, conflicts on the
    Secret's resourceVersion; it reads again and finds the renewal made."""
    first, second = replica(kube_api_client, tmp_path, clocks, "a"), replica(kube_api_client, tmp_path, clocks, "b")
    objects = second.controller.secret._secrets
    write = objects.replace

    def first_writes_meanwhile(obj):
        first.check()
        write(obj)

    objects.replace = first_writes_meanwhile  # type: ignore[method-assign]
    second.start()
    assert cluster.requests.count("PUT", f"/secrets/{SECRET}$") == 2
    assert (first.controller.secret.renewals, second.controller.secret.renewals) == (1, 0)
    assert first.served() == second.served() == secret_data(cluster)["tls.crt"]


def test_a_renewal_adds_a_ca_and_each_replica_moves_on_once_the_configurations_trust_it(cluster, kube_api_client, tmp_path, clocks):
    one = replica(kube_api_client, tmp_path, clocks)
    one.start()
    old = secret_data(cluster)
    clocks.advance(60 * DAY)
    one.check()
    new = secret_data(cluster)
    assert cas(new["ca.crt"])[1:] == cas(old["ca.crt"]), "the new CA first, the old one kept"
    assert bundles(cluster) == [new["ca.crt"]] * 4
    assert one.served() == old["tls.crt"], "the old certificate until the API servers have had time to see the new CA"
    clocks.advance(TRUST_DELAY - 0.1)
    one.check()
    assert one.served() == old["tls.crt"]
    clocks.advance(0.1)
    one.check()
    assert one.served() == new["tls.crt"] and one.reloads == [old["tls.crt"], new["tls.crt"]]
    assert one.controller.readiness() is None


def test_the_old_ca_leaves_the_bundles_once_it_has_expired(cluster, kube_api_client, tmp_path, clocks):
    one = replica(kube_api_client, tmp_path, clocks)
    one.start()
    clocks.advance(60 * DAY)
    one.check()
    clocks.advance(31 * DAY)
    one.check()
    assert len(cas(secret_data(cluster)["ca.crt"])) == 1
    assert all(len(cas(bundle)) == 1 for bundle in bundles(cluster))


def test_a_secret_edited_by_hand_is_renewed_and_the_certificate_served_stays_trusted(cluster, kube_api_client, tmp_path, clocks, caplog):
    one = replica(kube_api_client, tmp_path, clocks)
    one.start()
    served = one.served()
    secret = cluster.get("secrets", NAMESPACE, SECRET)
    secret["data"] = {"tls.crt": base64.b64encode(b"garbage").decode()}
    cluster.replace(secret)
    with caplog.at_level(logging.INFO):
        one.check()
    assert "renewed the serving certificate in Secret grove-system/webhook-certificate (tls.crt is not a PEM certificate)" in caplog.text
    assert all(len(cas(bundle)) == 2 for bundle in bundles(cluster)), "the CA of the certificate served stays trusted"
    assert one.served() == served


def test_a_ca_bundle_removed_by_hand_is_written_again_at_the_next_check(cluster, kube_api_client, tmp_path, clocks):
    one = replica(kube_api_client, tmp_path, clocks)
    one.start()
    configuration = cluster.get("mutatingwebhookconfigurations", None, CONFIGURATION)
    for webhook in configuration["webhooks"]:
        webhook["clientConfig"].pop("caBundle")
    cluster.replace(configuration)
    one.check()
    assert bundles(cluster) == [secret_data(cluster)["ca.crt"]] * 4


def test_without_the_api_server_a_replica_starts_not_ready_and_catches_up(cluster, tmp_path, clocks):
    with CuttableProxy((cluster.host, cluster.port)) as proxy:
        one = replica(new_api_client(proxy.write_kubeconfig(tmp_path / "kubeconfig")), tmp_path, clocks)
        proxy.cut()
        one.start()
        assert one.files.cert.read_bytes().startswith(b"-----BEGIN CERTIFICATE-----"), "a placeholder to start the listener with"
        assert one.controller.readiness() == "no serving certificate from Secret grove-system/webhook-certificate yet"
        assert one.controller.failed_checks == 1
        proxy.restore()
        one.check()
        assert one.served() == secret_data(cluster)["tls.crt"] and one.reloads


def test_a_missing_secret_is_named_with_how_to_make_it(cluster, kube_api_client, tmp_path, clocks, caplog):
    cluster.delete("secrets", NAMESPACE, SECRET)
    one = replica(kube_api_client, tmp_path, clocks)
    one.start()
    assert ("Secret grove-system/webhook-certificate does not exist: the chart creates it, empty; without the chart "
            "create it with 'kubectl -n grove-system create secret generic webhook-certificate'") in caplog.text
    assert one.controller.readiness() is not None


def test_a_release_without_a_validating_webhook_trusts_through_the_mutating_one_alone(cluster, kube_api_client, tmp_path, clocks):
    """``serve --no-validating-webhook``: a ValidatingAdmissionPolicy decides PodCliqueSets, and the
    chart (validation.mode policy) installs no ValidatingWebhookConfiguration."""
    cluster.delete("validatingwebhookconfigurations", None, CONFIGURATION)
    one = Replica(kube_api_client, tmp_path / "a", clocks, kinds=("MutatingWebhookConfiguration",))
    one.start()
    clocks.advance(TRUST_DELAY)
    assert one.controller.readiness() is None
    assert bundles(cluster) == [secret_data(cluster)["ca.crt"]] * 2  # the mutating configuration's two webhooks


def test_a_missing_configuration_keeps_the_replica_unready_and_says_which(cluster, kube_api_client, tmp_path, clocks, caplog):
    cluster.delete("validatingwebhookconfigurations", None, CONFIGURATION)
    one = replica(kube_api_client, tmp_path, clocks)
    one.start()
    clocks.advance(TRUST_DELAY)
    assert "ValidatingWebhookConfiguration webhook does not exist: nothing trusts the serving certificate" in caplog.text
    assert one.served() == secret_data(cluster)["tls.crt"]
    assert one.controller.readiness() == "the CA of the serving certificate is not yet in both webhook configurations"
