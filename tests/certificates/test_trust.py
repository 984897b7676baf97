"""What both webhook configurations are given to trust: the Secret's CAs and every CA already
there, until each expires; and which CAs count as trusted (in every webhook of both)."""

from __future__ import annotations

from certificates.pki import DAY, NOW, ca
from webhook.certificates.pki import cert_pem, fingerprint, read_cas
from webhook.certificates.trust import published, trusted_by

NEW, OLD, EXPIRED, HAND_MADE = ca(), ca(NOW - 60 * DAY), ca(NOW - 100 * DAY), ca()


def fingerprints(pem: bytes) -> list[str]:
    return [fingerprint(c) for c in read_cas(pem)]


def test_the_secret_s_cas_come_first_and_those_already_there_stay_until_they_expire():
    configured = [cert_pem(OLD[0]) + cert_pem(EXPIRED[0]), cert_pem(HAND_MADE[0]) + b"garbage"]
    bundle = published([NEW[0], OLD[0]], configured, NOW)
    assert fingerprints(bundle) == [fingerprint(c[0]) for c in (NEW, OLD, HAND_MADE)]


def test_an_emptied_secret_does_not_take_a_ca_in_use_out_of_the_configurations():
    assert fingerprints(published([], [cert_pem(OLD[0])], NOW)) == [fingerprint(OLD[0])]


def test_a_ca_is_trusted_when_every_webhook_of_both_configurations_has_it():
    both, one = cert_pem(NEW[0]) + cert_pem(OLD[0]), cert_pem(NEW[0])
    assert trusted_by([both, one, both]) == {fingerprint(NEW[0])}
    assert trusted_by([both, b""]) == set()
    assert trusted_by([]) == set()
