"""A response's head goes out with its body (one TLS record, one ``send``), a large answer still in
pieces under the transport's flow control, and nothing held is lost or reordered."""

from __future__ import annotations

import asyncio
from typing import Any

from webhook.server.connection.protocol import HELD_WRITE, CoalescedWrites, TurnWrites


class Recording(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[Any] = []
        self.closing = False

    def is_closing(self) -> bool:
        return self.closing

    def write(self, data: Any) -> None:
        self.events.append(bytes(data))

    def close(self) -> None:
        self.events.append("close")
        self.closing = True

    def abort(self) -> None:
        self.events.append("abort")


HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n"


def _on_a_loop(steps: Any) -> list[Any]:
    async def run() -> list[Any]:
        recording = Recording()
        loop = asyncio.get_running_loop()
        steps(CoalescedWrites(recording, loop, TurnWrites(loop)))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return recording.events

    return asyncio.run(run())


def test_a_head_and_its_body_are_one_write() -> None:
    assert _on_a_loop(lambda t: (t.write(HEAD), t.write(b"body"))) == [HEAD + b"body"]


def test_a_whole_answer_goes_out_at_once() -> None:
    async def run() -> list[Any]:
        recording = Recording()
        loop = asyncio.get_running_loop()
        CoalescedWrites(recording, loop, TurnWrites(loop)).write(HEAD + b"body")
        return recording.events

    assert asyncio.run(run()) == [HEAD + b"body"]


def test_a_head_alone_goes_out_at_the_end_of_the_loops_turn() -> None:
    assert _on_a_loop(lambda t: t.write(HEAD)) == [HEAD]


def test_a_large_answer_in_pieces_is_held_no_further_than_its_first_piece() -> None:
    piece = b"x" * (HELD_WRITE + 1)
    assert _on_a_loop(lambda t: [t.write(HEAD), *(t.write(piece) for _ in range(3))]) == [HEAD + piece, piece, piece]


def test_a_close_sends_what_is_held_first_and_an_abort_drops_it() -> None:
    assert _on_a_loop(lambda t: (t.write(HEAD), t.close())) == [HEAD, "close"]
    assert _on_a_loop(lambda t: (t.write(HEAD), t.abort())) == ["abort"]


def test_what_is_held_is_dropped_when_the_connection_has_gone() -> None:
    def head_then_gone(t: CoalescedWrites) -> None:
        t.write(HEAD)
        t.transport.closing = True  # type: ignore[attr-defined]  # the peer went away

    assert _on_a_loop(head_then_gone) == []


def test_a_turns_first_answer_goes_out_at_once_and_the_others_at_its_end_each_connection_in_order() -> None:
    """Answers decided in one turn of the loop are written after it, but the first: a lone request
    waits for nothing. A connection's own writes keep their order, and a close sends what is held."""

    async def run() -> tuple[list[list[Any]], list[list[Any]]]:
        loop = asyncio.get_running_loop()
        turns = TurnWrites(loop)
        a, b, c = Recording(), Recording(), Recording()
        first, second, third = (CoalescedWrites(t, loop, turns) for t in (a, b, c))
        first.write_answer(b"A1")
        second.write_answer(b"B1")
        second.write_answer(b"B2")
        third.write_answer(b"C1")
        third.close()
        within = [list(t.events) for t in (a, b, c)]
        await asyncio.sleep(0)
        after = [list(t.events) for t in (a, b, c)]
        first.write_answer(b"A2")  # the next turn's first
        after[0] = list(a.events)
        return within, after

    within, after = asyncio.run(run())
    assert within == [[b"A1"], [], [b"C1", "close"]]
    assert after == [[b"A1", b"A2"], [b"B1B2"], [b"C1", "close"]]
