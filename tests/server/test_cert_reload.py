"""Certificate rotation under a running server, done the way the kubelet updates a Secret volume."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import ssl
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from prometheus_client.parser import text_string_to_metric_families
from server.reviews import VALIDATE, body, review, workload_pcs
from server.serverproc import Served, make_certs, poll, serve

from webhook.certs import ensure

PAIR = ("tls.crt", "tls.key")


def publish(volume: Path, version: str, crt: Path, key: Path) -> None:
    """As the kubelet's atomic writer: a new timestamped directory, then ``..data`` swapped to it by
    rename; ``tls.crt`` and ``tls.key`` are symlinks through ``..data`` that never change."""
    target = volume / f"..{version}"
    target.mkdir()
    shutil.copy(crt, target / "tls.crt")
    shutil.copy(key, target / "tls.key")
    staged = volume / "..data_tmp"
    staged.symlink_to(target.name)
    os.replace(staged, volume / "..data")
    for name in PAIR:
        if not (volume / name).is_symlink():
            (volume / name).symlink_to(f"..data/{name}")


def served_certificate(served: Served) -> bytes:
    """The certificate a new connection is given."""
    port = urlsplit(served.url).port
    context = ssl.create_default_context(cafile=served.ca)
    with socket.create_connection(("127.0.0.1", port)) as raw, context.wrap_socket(raw, server_hostname="localhost") as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def der(path: Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(path.read_text())


def metric(served: Served, name: str) -> float:
    with served.client() as client:
        text = client.get("/metrics").text
    return next(s.value for f in text_string_to_metric_families(text) for s in f.samples if s.name == name)


class KeptAliveLoad:
    """Requests on one kept-alive connection, in a thread, for as long as the rotation takes."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.stop = threading.Event()
        self.answered = 0
        self.failures: list[str] = []
        self.local_ports: set[int] = set()
        self.thread = threading.Thread(target=self.run)

    def run(self) -> None:
        content = body(review(workload_pcs()))
        with self.served.client() as client:
            while not self.stop.is_set():
                try:
                    response = client.post(VALIDATE, content=content, headers={"content-type": "application/json"})
                    self.local_ports.add(response.extensions["network_stream"].get_extra_info("client_addr")[1])
                    if response.status_code != 200 or not response.json()["response"]["allowed"]:
                        self.failures.append(response.text)
                    self.answered += 1
                except Exception as err:  # noqa: BLE001 - any failure is what the test reports
                    self.failures.append(repr(err))

    def __enter__(self) -> KeptAliveLoad:
        self.thread.start()
        poll(lambda: self.answered > 0, "the first kept-alive answer")
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def test_new_connections_get_the_rotated_certificate_while_requests_keep_succeeding(tmp_path: Path) -> None:
    first = make_certs(tmp_path / "first")
    second = tmp_path / "second"
    second.mkdir()
    for name in ("ca.crt", "ca.key"):
        shutil.copy(first / name, second / name)
    ensure(second, ["localhost", "127.0.0.1", "webhook.example"])
    other = make_certs(tmp_path / "other")
    volume = tmp_path / "volume"
    volume.mkdir()
    publish(volume, "2026_01_01", first / "tls.crt", first / "tls.key")

    with serve(
        tmp_path, "--cert-reload-interval", "0.05",
        cert=volume / "tls.crt", key=volume / "tls.key", ca=first / "ca.crt",
    ) as served:
        assert served_certificate(served) == der(first / "tls.crt")
        with KeptAliveLoad(served) as load:
            publish(volume, "2026_02_01", second / "tls.crt", second / "tls.key")
            poll(lambda: served_certificate(served) == der(second / "tls.crt"), "the rotated certificate")
            assert metric(served, "webhook_certificate_reloads_total") == 1

            publish(volume, "2026_03_01", other / "tls.crt", second / "tls.key")
            poll(lambda: metric(served, "webhook_certificate_reload_errors_total") == 1, "the failed reload to be counted")
            assert served_certificate(served) == der(second / "tls.crt")
            answered_during_rotation = load.answered

        assert load.failures == []
        assert answered_during_rotation > 1
        assert len(load.local_ports) == 1, "the kept-alive connection was dropped"
        assert "reloaded the serving certificate" in served.log_text()
        assert "still serving the previous certificate" in served.log_text()


def key_type(der: bytes) -> str:
    public_key = x509.load_der_x509_certificate(der).public_key()
    return "rsa" if isinstance(public_key, rsa.RSAPublicKey) else "ecdsa" if isinstance(public_key, ec.EllipticCurvePublicKey) else "other"


def test_a_pair_of_another_key_type_replaces_the_served_one_and_back(tmp_path: Path) -> None:
    """OpenSSL keeps one certificate per key type in a context: loaded into the live one, an RSA
    pair would sit beside the ECDSA one, which clients offering both (all of them) go on getting."""
    first = make_certs(tmp_path / "ecdsa")
    renewed = tmp_path / "rsa"
    renewed.mkdir()
    for name in ("ca.crt", "ca.key"):
        shutil.copy(first / name, renewed / name)
    ensure(renewed, ["localhost", "127.0.0.1"], key_type="rsa")
    again = tmp_path / "ecdsa-again"
    again.mkdir()
    for name in ("ca.crt", "ca.key"):
        shutil.copy(first / name, again / name)
    ensure(again, ["localhost", "127.0.0.1"])
    volume = tmp_path / "volume"
    volume.mkdir()
    publish(volume, "1", first / "tls.crt", first / "tls.key")

    with serve(tmp_path, "--cert-reload-interval", "0.05", cert=volume / "tls.crt", key=volume / "tls.key", ca=first / "ca.crt") as served:
        assert key_type(served_certificate(served)) == "ecdsa"
        publish(volume, "2", renewed / "tls.crt", renewed / "tls.key")
        poll(lambda: metric(served, "webhook_certificate_reloads_total") == 1, "the RSA pair to be loaded")
        assert served_certificate(served) == der(renewed / "tls.crt")
        assert key_type(served_certificate(served)) == "rsa"
        publish(volume, "3", again / "tls.crt", again / "tls.key")
        poll(lambda: metric(served, "webhook_certificate_reloads_total") == 2, "the ECDSA pair to be loaded")
        assert served_certificate(served) == der(again / "tls.crt")


def test_changed_files_that_cannot_serve_keep_the_certificate_and_say_why(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from webhook.server.limits import Budget, Lifecycle
    from webhook.server.metrics import ServerMetrics
    from webhook.server.run import CertificateReloader, _load
    from webhook.stores import EmbeddedStore

    ensure(tmp_path, ["localhost"])
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    metrics = ServerMetrics(EmbeddedStore.of([]), Lifecycle(), Budget(1024))
    reloader = CertificateReloader(_load(cert, key), cert, key, metrics, 1.0)
    key.write_bytes(cert.read_bytes() + b"\n")  # the certificate written where the key goes
    with caplog.at_level(logging.WARNING):
        assert reloader.check() is False
    assert caplog.messages == [
        "certificate files changed but cannot be loaded, still serving the previous certificate: "
        "the key file holds a certificate, not a private key (are --tls-cert and --tls-key swapped?)"
    ]
    assert metrics.certificate_reload_errors._value.get() == 1


def not_after(path: Path) -> float:
    return x509.load_pem_x509_certificate(path.read_bytes()).not_valid_after_utc.timestamp()


def test_the_metrics_say_when_the_certificate_served_expires(tmp_path: Path) -> None:
    """For the alert that fires before it does: the expiry of the pair in use, after a reload too."""
    first = make_certs(tmp_path / "first")
    later = tmp_path / "later"
    later.mkdir()
    for name in ("ca.crt", "ca.key"):
        shutil.copy(first / name, later / name)
    ensure(later, ["localhost", "127.0.0.1"], days=730)
    volume = tmp_path / "volume"
    volume.mkdir()
    publish(volume, "2026_01_01", first / "tls.crt", first / "tls.key")
    with serve(tmp_path, "--cert-reload-interval", "0.05", cert=volume / "tls.crt", key=volume / "tls.key", ca=first / "ca.crt") as served:
        assert metric(served, "webhook_certificate_expiry_timestamp_seconds") == not_after(first / "tls.crt")
        publish(volume, "2026_02_01", later / "tls.crt", later / "tls.key")
        poll(lambda: metric(served, "webhook_certificate_expiry_timestamp_seconds") == not_after(later / "tls.crt"),
             "the renewed certificate's expiry")
