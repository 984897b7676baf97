"""Where the server is in its life, shared by the app (readiness) and every connection (the drain).

SIGTERM sets ``draining``: ``/readyz`` fails and every response says ``Connection: close``, so load
balancers stop sending new connections and kept-alive clients move to other replicas while the
listener still accepts (``--shutdown-delay``). Then the listener closes (``closed``) and the
connections still open are drained (``webhook.server.drain``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

DROP_REASONS = ("header_timeout", "header_too_large", "over_budget", "write_timeout", "drained_idle", "drain_timeout")
"""Why the server dropped a connection: no complete request head within ``--header-timeout``; a
head (or a chunked body's trailers) over ``--max-header-bytes``, a header line over
``--max-header-line-bytes`` or more than ``--max-headers`` lines (answered 431); a request the
``--max-held-bytes`` budget could not take (answered 503); an answer not taken within
``--write-timeout``; idle through the ``GRACE`` after the listener closed; still open at
``--drain-timeout``."""

GRACE = 1.0
"""Seconds an idle connection still gets to deliver a request once the listener has closed: one a
client picked from its pool just before it saw the server close is then answered, not lost."""


@dataclass(slots=True)
class Lifecycle:
    draining: bool = False
    """SIGTERM was received: readiness fails and responses close their connections."""
    closed: bool = False
    """The listener is closed: idle connections get ``GRACE`` seconds, then close."""
    last_accepted: float = 0.0
    """Event-loop time of the last connection accepted: a TLS handshake may still be under way on
    it when the listener closes, so the drain lasts at least ``GRACE`` beyond it."""
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DROP_REASONS, 0))
    """Connections the server dropped, by reason (counted on the event loop), for metrics."""
