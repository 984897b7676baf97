"""What a server's connections leave to the end of the event loop's turn: the decisions of the
requests read in it, and the answers but the first.

Under load one turn of the loop reads the requests of several connections (``epoll`` hands it
every connection with data, and each is decrypted and parsed in turn). Deciding each request as it
is read, and writing each answer as soon as it is decided, puts the kernel's and OpenSSL's work for
one request between the decisions of the next, which then finds little of what it needs in the
processor's caches. So the work of a turn is done in three runs: the reads, then the decisions one
after another at the turn's end (``LoopTurn.decide``), then the answers (the first at once, so that
a lone request waits for nothing; the others held by their connections, ``CoalescedWrites``, to
the end of that turn). docs/PERFORMANCE.md has what each run saves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


class LoopTurn:
    """The end of the loop's turn, one for all the connections of a server: the decisions asked
    for in a turn, and whether it has written an answer yet."""

    __slots__ = ("loop", "decisions", "written")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.decisions: list[tuple[Callable[[Any], None], Any]] = []
        self.written = False

    def decide(self, decide: Callable[[Any], None], request: Any) -> None:
        """``decide(request)`` at the end of this turn, after the decisions asked for before it."""
        self.decisions.append((decide, request))
        if len(self.decisions) == 1:
            self.loop.call_soon(self._decide)

    def _decide(self) -> None:
        """Each decision as the loop would run it as a callback of its own: one that raises is
        reported to the loop's exception handler, and the others are made all the same."""
        decisions, self.decisions = self.decisions, []
        for decide, request in decisions:
            try:
                decide(request)
            except Exception as err:  # noqa: BLE001 - a bug of ours, reported as the loop reports one
                self.loop.call_exception_handler({"message": f"Exception in {decide!r}", "exception": err})

    def first_answer(self) -> bool:
        """Whether this is the turn's first answer (from now on one has been written)."""
        if self.written:
            return False
        self.written = True
        self.loop.call_soon(self._turn_ended)
        return True

    def _turn_ended(self) -> None:
        self.written = False


class CoalescedWrites:
    """The connection's transport, a response's head sent with what follows it, and a whole
    answer held to the end of the loop's turn unless it is the turn's first (``LoopTurn``).

    uvicorn writes a response's head and its body apart; over TLS each write is its own record and
    its own ``send``. A head alone (a small write ending in the blank line that ends a head) is
    held until the next write or the end of the loop's turn, whichever comes first, and goes out
    with it: one record and one system call per ordinary answer. What is held is a head, or the
    answers of one turn (more than one only when a client pipelines), never a large answer's pieces,
    which meet the transport's flow control as before; it goes out before anything written after
    it, and anything that ends the connection hands it over first."""

    __slots__ = ("transport", "loop", "turn", "held")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop, turn: LoopTurn) -> None:
        self.transport = transport
        self.loop = loop
        self.turn = turn
        self.held: bytes | None = None

    def write(self, data: bytes) -> None:
        if self.held is not None:
            data, self.held = self.held + data, None
            self.transport.write(data)
        elif len(data) <= HELD_WRITE and data[-4:] == b"\r\n\r\n":
            self._hold(data)
        else:
            self.transport.write(data)

    def write_answer(self, data: bytes) -> None:
        """A whole answer (the webhooks', ``exchanges``): at once when it is the turn's first, else
        held to the turn's end."""
        if self.turn.first_answer():
            self.write(data)
        else:
            self._hold(data)

    def _hold(self, data: bytes) -> None:
        """``data`` after what is held, handed over at the end of the loop's turn at the latest."""
        if self.held is None:
            self.held = data
            self.loop.call_soon(self.flush)
        else:
            self.held += data

    def flush(self) -> None:
        """Hands over what is held, unless the connection has gone meanwhile."""
        if self.held is not None:
            data, self.held = self.held, None
            if not self.transport.is_closing():
                self.transport.write(data)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def abort(self) -> None:
        self.held = None
        self.transport.abort()

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


HELD_WRITE = 4096
"""Bytes a write may have and be held for the next: a response head."""
