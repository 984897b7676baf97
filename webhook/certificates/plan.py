"""What the certificate Secret needs, decided from what it holds and the time: nothing, a renewal,
or the expired CAs taken out of its bundle. A pure value, so each case is tested without a client;
``webhook.certificates.controller`` applies it.

A renewal is a new CA and a serving certificate it signs, both valid for ``--cert-validity``; the
CA's key is not kept (the next renewal makes a new CA). The new CA goes first in the bundle and
every CA of the bundle that has not expired stays after it, so the certificates of the previous
CA, still served until every replica has moved on, stay trusted.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from enum import StrEnum

from webhook.certificates.issue import cert_pem, key_pem, new_ca, new_serving
from webhook.certificates.stored import CA_BUNDLE, TLS_CERT, TLS_KEY, Stored, bundle_pem, unexpired

CLOCK_SKEW = datetime.timedelta(minutes=5)
"""How far before its making a certificate is valid, for clients whose clocks are behind; at most a
tenth of the lifetime, so that a short lifetime (tests) is not mostly in the past."""


class Action(StrEnum):
    KEEP = "keep"
    RENEW = "renew"
    PRUNE = "prune"


@dataclass(frozen=True, slots=True)
class Plan:
    action: Action
    why: str


def plan(stored: Stored, now: datetime.datetime) -> Plan:
    pair = stored.pair
    if pair is None:
        return Plan(Action.RENEW, stored.problem or "it holds no certificate")
    if now >= pair.renewal_due:
        return Plan(Action.RENEW, f"the certificate ({pair}) is past two thirds of its lifetime")
    expired = len(stored.bundle) - len(unexpired(stored.bundle, now))
    if expired:
        return Plan(Action.PRUNE, f"{expired} CA of its bundle expired")
    return Plan(Action.KEEP, "")


def renewed(stored: Stored, hosts: list[str], validity: datetime.timedelta, name: str, now: datetime.datetime) -> dict[str, bytes]:
    """The Secret's new values: a new CA, first in the bundle, and a serving certificate it signs."""
    not_before = now - min(CLOCK_SKEW, validity / 10)
    ca = new_ca(f"{name} CA {now:%Y-%m-%dT%H:%M:%SZ}", not_before, now + validity)
    cert, key = new_serving(ca, hosts, not_before, now + validity)
    return {
        CA_BUNDLE: bundle_pem([ca[0], *unexpired(stored.bundle, now)]),
        TLS_CERT: cert_pem(cert),
        TLS_KEY: key_pem(key),
    }


def pruned(stored: Stored, now: datetime.datetime) -> dict[str, bytes]:
    """The bundle without its expired CAs (only asked for while the pair is good)."""
    assert stored.pair is not None
    return {CA_BUNDLE: bundle_pem(unexpired(stored.bundle, now)), TLS_CERT: stored.pair.cert_pem, TLS_KEY: stored.pair.key_pem}
