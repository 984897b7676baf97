"""Certificates and Secret contents for the certificate controller's tests, made as a user might
have made them (or broken them) by hand."""

from __future__ import annotations

import base64
import datetime

from webhook.certificates.pki import Pair, cert_pem, key_pem, new_ca, new_serving

HOSTS = ["webhook.grove-system.svc", "127.0.0.1"]
NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
DAY = datetime.timedelta(days=1)


def ca(start: datetime.datetime = NOW, days: float = 90) -> Pair:
    return new_ca("test CA", start, start + days * DAY)


def serving(authority: Pair, hosts: list[str] = HOSTS, start: datetime.datetime = NOW, days: float = 90) -> Pair:
    return new_serving(authority, hosts, start, start + days * DAY)


def data(bundle: list[Pair], pair: Pair | None) -> dict[str, str]:
    """A Secret's ``data`` holding ``bundle`` as ca.crt and ``pair`` as tls.crt and tls.key."""
    values = {"ca.crt": b"".join(cert_pem(c) for c, _ in bundle)}
    if pair is not None:
        values |= {"tls.crt": cert_pem(pair[0]), "tls.key": key_pem(pair[1])}
    return {key: base64.b64encode(value).decode() for key, value in values.items()}
