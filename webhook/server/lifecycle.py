"""Where the server is in its life, shared by the app (readiness, ``Connection: close``), the request
limits and the signal handler.

SIGTERM sets ``draining``: ``/readyz`` fails and every response says ``Connection: close``, so load
balancers stop sending new connections and kept-alive clients move to other replicas while the
listener still accepts (``--shutdown-delay``). Then ``closed``: uvicorn closes the listener and
drains what is left (``webhook.server.run``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

DROP_REASONS = ("header_timeout", "header_too_large", "over_budget", "write_timeout", "drained_idle", "drain_timeout")
"""Why the server dropped a connection: no complete request head within ``--header-timeout``; a
connection holding more than ``--max-header-bytes`` beyond its bodies, or a head with more than
``--max-headers`` lines or a line over ``--max-header-line-bytes`` (answered 431); a request or a
head ``--max-held-bytes`` could not take (a body answered 503); an answer not taken within
``--write-timeout``; idle when the listener closed; still open at ``--drain-timeout``."""


@dataclass(slots=True)
class Lifecycle:
    draining: bool = False
    """SIGTERM was received: readiness fails and responses close their connections."""
    closed: bool = False
    """The listener is closing: uvicorn drains the connections, and cancels what is left at the end."""
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DROP_REASONS, 0))
    """Connections the server dropped, by reason (counted on the event loop), for metrics."""
