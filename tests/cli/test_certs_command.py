"""``webhook certs``: the files a developer and ``make run`` rely on, kept while they are valid."""

from __future__ import annotations

import datetime
import ipaddress
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import Encoding, load_pem_private_key
from cryptography.x509.oid import NameOID

from webhook.cli import main

FILES = ("ca.crt", "ca.key", "tls.crt", "tls.key")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["certs", *args]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return out.strip()


def contents(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in FILES}


def serving(directory: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate((directory / "tls.crt").read_bytes())


def write_ed25519_certificate(path: Path) -> None:
    """A valid self-signed certificate for an Ed25519 key, a key type the command never writes."""
    key = ed25519.Ed25519PrivateKey.generate()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, None)
    )
    path.write_bytes(cert.public_bytes(Encoding.PEM))


def test_writes_a_ca_and_a_serving_certificate_for_the_requested_hosts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "certs"
    message = run(capsys, "--out", str(out), "--cert-hosts", "webhook.grove-system.svc,localhost,10.0.0.7")
    assert message == (
        f"wrote a new CA and serving certificate for webhook.grove-system.svc, localhost, 10.0.0.7 to {out} (ca.crt is missing)"
    )
    cert = serving(out)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["webhook.grove-system.svc", "localhost"]
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("10.0.0.7")]
    ca = x509.load_pem_x509_certificate((out / "ca.crt").read_bytes())
    cert.verify_directly_issued_by(ca)
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
    assert cert.public_key().curve.name == "secp256r1"  # type: ignore[union-attr]


def test_keys_are_readable_by_the_owner_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--out", str(tmp_path))
    modes = {name: stat.S_IMODE((tmp_path / name).stat().st_mode) for name in FILES}
    assert modes == {"ca.crt": 0o644, "ca.key": 0o600, "tls.crt": 0o644, "tls.key": 0o600}


def test_valid_files_are_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--out", str(tmp_path))
    before = contents(tmp_path)
    message = run(capsys, "--out", str(tmp_path))
    assert message == f"kept the valid certificates in {tmp_path} (serving certificate for localhost, 127.0.0.1)"
    assert contents(tmp_path) == before


def test_force_replaces_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--out", str(tmp_path))
    before = contents(tmp_path)
    assert run(capsys, "--out", str(tmp_path), "--force").endswith("(--force)")
    after = contents(tmp_path)
    assert all(after[name] != before[name] for name in FILES)


@pytest.mark.parametrize(
    ("spoil", "reason"),
    [
        pytest.param(lambda d: None, "tls.crt does not cover webhook.example", id="host-not-covered"),
        pytest.param(lambda d: (d / "tls.key").write_bytes((d / "ca.key").read_bytes()), "tls.key does not match tls.crt", id="key-mismatch"),
        pytest.param(lambda d: write_ed25519_certificate(d / "tls.crt"), "tls.key does not match tls.crt", id="ed25519-certificate"),
        pytest.param(lambda d: (d / "tls.crt").write_text("garbage"), "tls.crt is not a PEM certificate", id="unparsable"),
        pytest.param(lambda d: (d / "tls.key").unlink(), "tls.key is missing", id="missing-key"),
    ],
)
def test_an_unusable_serving_certificate_is_replaced_and_the_ca_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spoil: object, reason: str
) -> None:
    run(capsys, "--out", str(tmp_path))
    ca_before = (tmp_path / "ca.crt").read_bytes()
    spoil(tmp_path)  # type: ignore[operator]
    message = run(capsys, "--out", str(tmp_path), "--cert-hosts", "localhost,127.0.0.1,webhook.example")
    assert message.startswith("wrote a new serving certificate for localhost, 127.0.0.1, webhook.example")
    assert message.endswith(f"({reason})")
    assert (tmp_path / "ca.crt").read_bytes() == ca_before
    serving(tmp_path).verify_directly_issued_by(x509.load_pem_x509_certificate(ca_before))


def test_a_serving_certificate_from_another_ca_is_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--out", str(tmp_path / "a"))
    run(capsys, "--out", str(tmp_path / "b"))
    for name in ("tls.crt", "tls.key"):
        (tmp_path / "a" / name).write_bytes((tmp_path / "b" / name).read_bytes())
    assert run(capsys, "--out", str(tmp_path / "a")).endswith("(tls.crt is not signed by ca.crt)")


def test_rsa_keys_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--out", str(tmp_path), "--key-type", "rsa")
    key = load_pem_private_key((tmp_path / "tls.key").read_bytes(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    assert key.key_size == 2048


def test_environment_variables_set_the_options(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOOK_OUT", str(tmp_path))
    monkeypatch.setenv("WEBHOOK_CERT_HOSTS", "svc.example, 127.0.0.1")
    assert "for svc.example, 127.0.0.1" in run(capsys)
    assert serving(tmp_path).extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName) == ["svc.example"]


def test_a_bad_host_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["certs", "--out", str(tmp_path), "--cert-hosts", "bad host"]) == 2
    err = capsys.readouterr().err
    assert err == "webhook certs: error: invalid value 'bad host' for --cert-hosts: 'bad host' is neither an IP address nor a DNS name\n"


def test_the_former_name_of_cert_hosts_is_still_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Scripts written before the rename (``--hosts``) make the same certificates."""
    assert main(["certs", "--out", str(tmp_path), "--hosts", "localhost,127.0.0.1"]) == 0
    assert "for localhost, 127.0.0.1" in capsys.readouterr().out
