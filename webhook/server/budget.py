"""The bytes the server holds for its clients, all connections together, and the ceiling on them.

Every byte a client makes the server hold counts here while it is held: what a connection holds
beyond the bodies it has delivered, a head still arriving say (``webhook.server.guard``), a body
being read and a large answer being written (``webhook.server.limits``). A body that would take the
server past ``--max-held-bytes`` is refused with 503 and ``Retry-After`` rather than read (a head,
which cannot be answered before it ends, has its connection dropped), so that a replica's memory is
bounded by what its pod may use, whatever its clients send and however slowly they read.

Large requests alone would let a few slow clients hold the whole budget and lock every ordinary
review out until their timeouts. So the last quarter is kept for holders of at most ``SMALL``
bytes: an API server's review (a pod, a PodCliqueSet) is far smaller, and a client must open many
connections, each sending at its own cost, to take that quarter as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SMALL = 256 * 1024
"""A holder of at most this many bytes may use the whole budget; larger ones only three quarters."""

BUSY = "the server holds as many request and answer bytes as it may at once; retry shortly"
"""What a refused client is told (HTTP 503)."""

RETRY_AFTER = b"1"
"""Seconds a refused client is asked to wait: bodies and answers are held for seconds at most,
unless their clients are slow, and then ``--body-timeout`` and ``--write-timeout`` end them."""


@dataclass(slots=True)
class Budget:
    limit: int
    held: int = 0
    large: int = field(init=False)
    """What holders of more than ``SMALL`` bytes may fill: three quarters of the limit."""

    def __post_init__(self) -> None:
        self.large = self.limit - self.limit // 4

    def fits(self, amount: int) -> bool:
        """Whether a new holder of ``amount`` bytes would fit now (a body of known length)."""
        return self.held + amount <= (self.limit if amount <= SMALL else self.large)

    def take(self, amount: int, holding: int) -> bool:
        """Adds ``amount`` bytes for a holder that already holds ``holding``; False, and nothing
        taken, when that would go past what a holder of its size may fill."""
        held = self.held + amount
        if held > (self.limit if holding + amount <= SMALL else self.large):
            return False
        self.held = held
        return True

    def add(self, amount: int) -> None:
        """Counts bytes that are held already and cannot be refused (an answer once made; negative
        for bytes let go in the same step)."""
        self.held += amount

    def release(self, amount: int) -> None:
        self.held -= amount
