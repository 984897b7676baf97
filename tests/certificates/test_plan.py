"""What the certificate Secret needs, decided from what it holds and the time: a renewal when it
cannot serve (whatever was written there by hand) or two thirds into the certificate's lifetime,
the expired CAs pruned, else nothing. And what a renewal writes."""

from __future__ import annotations

import base64
import datetime

import pytest
from cryptography import x509

from certificates.pki import DAY, HOSTS, NOW, ca, data, serving
from webhook.certificates.pki import cert_pem, fingerprint, read_cas
from webhook.certificates.secret import Action, plan, pruned, read, renewed

AUTHORITY = ca()
OTHER = ca()
PAIR = serving(AUTHORITY)


def garbage(key: str, value: bytes) -> dict[str, str]:
    return {**data([AUTHORITY], PAIR), key: base64.b64encode(value).decode()}


CASES = {
    "an empty Secret (as the chart makes it)": (None, NOW, Action.RENEW, "it holds no certificate yet"),
    "a certificate that is no PEM": (garbage("tls.crt", b"hello"), NOW, Action.RENEW, "tls.crt is not a PEM certificate"),
    "data that is not base64": ({**data([AUTHORITY], PAIR), "tls.crt": "%%%"}, NOW, Action.RENEW, "tls.crt is not a PEM certificate"),
    "a key that is no PEM": (garbage("tls.key", b"-----BEGIN PRIVATE KEY-----\nxx\n"), NOW, Action.RENEW, "tls.key is not an unencrypted PEM private key"),
    "the key of another pair": (data([AUTHORITY], (PAIR[0], serving(AUTHORITY)[1])), NOW, Action.RENEW, "tls.key is not the key of tls.crt"),
    "a certificate for other names": (data([AUTHORITY], serving(AUTHORITY, ["elsewhere.example"])), NOW, Action.RENEW,
                                      "tls.crt does not cover webhook.grove-system.svc, 127.0.0.1"),
    "a CA bundle without its CA": (data([OTHER], PAIR), NOW, Action.RENEW, "tls.crt is not signed by a CA of ca.crt"),
    "an expired certificate": (data([AUTHORITY], PAIR), NOW + 91 * DAY, Action.RENEW, "tls.crt expired at 2026-04-01 00:00:00 UTC"),
    "a certificate two thirds through its lifetime": (data([AUTHORITY], PAIR), NOW + 60 * DAY, Action.RENEW, "past two thirds of its lifetime"),
    "a certificate not yet two thirds through": (data([AUTHORITY], PAIR), NOW + 59 * DAY, Action.KEEP, ""),
    "an expired CA in the bundle": (data([AUTHORITY, ca(NOW - 100 * DAY)], PAIR), NOW, Action.PRUNE, "1 CA of its bundle expired"),
}


@pytest.mark.parametrize(("secret", "now", "action", "why"), CASES.values(), ids=list(CASES))
def test_the_plan_of_what_the_secret_holds(secret, now, action, why):
    decided = plan(read(secret, HOSTS, now), now)
    assert decided.action is action
    assert why in decided.why


def test_a_renewal_is_a_new_ca_first_in_the_bundle_and_a_certificate_it_signs():
    now = NOW + 60 * DAY
    expired = ca(NOW - 100 * DAY)
    before = read(data([AUTHORITY, expired], PAIR), HOSTS, now)
    values = renewed(before, HOSTS, datetime.timedelta(days=90), "webhook-certificate", now)
    assert set(values) == {"ca.crt", "tls.crt", "tls.key"}, "the CA's key is not kept"
    bundle = read_cas(values["ca.crt"])
    assert [fingerprint(c) for c in bundle[1:]] == [fingerprint(AUTHORITY[0])], "the previous CA stays, the expired one goes"
    cert = x509.load_pem_x509_certificate(values["tls.crt"])
    cert.verify_directly_issued_by(bundle[0])
    after = read({k: base64.b64encode(v).decode() for k, v in values.items()}, HOSTS, now)
    assert after.pair is not None and after.pair.issuer == bundle[0]
    assert cert.not_valid_after_utc == bundle[0].not_valid_after_utc == now + 90 * DAY
    assert cert.not_valid_before_utc == now - datetime.timedelta(minutes=5)


def test_a_short_lifetime_is_not_mostly_in_the_past():
    """Certificates are valid a little before they are made (clocks behind), at most a tenth of
    their lifetime: a 30 s certificate is renewed after about 20 s, not at once."""
    values = renewed(read(None, HOSTS, NOW), HOSTS, datetime.timedelta(seconds=30), "s", NOW)
    pair = read({k: base64.b64encode(v).decode() for k, v in values.items()}, HOSTS, NOW).pair
    assert pair is not None
    assert pair.cert.not_valid_before_utc == NOW - datetime.timedelta(seconds=3)
    assert pair.renewal_due == NOW + datetime.timedelta(seconds=19)


def test_pruning_keeps_the_pair_and_the_ca_that_signed_it():
    stored = read(data([AUTHORITY, ca(NOW - 100 * DAY)], PAIR), HOSTS, NOW)
    values = pruned(stored, NOW)
    assert values["ca.crt"] == cert_pem(AUTHORITY[0]) and values["tls.crt"] == cert_pem(PAIR[0])


def test_a_bundle_with_garbage_between_its_cas_keeps_the_cas():
    pem = cert_pem(AUTHORITY[0]) + b"not a certificate\n" + cert_pem(PAIR[0]) + cert_pem(OTHER[0])
    assert [fingerprint(c) for c in read_cas(pem)] == [fingerprint(AUTHORITY[0]), fingerprint(OTHER[0])], "a non-CA is no CA"
