"""The requests read in a turn of the loop are decided at its end, one after another, and none is
lost to another's failure; a response's head goes out with its body (one TLS record, one
``send``), a large answer still in pieces under the transport's flow control, and nothing held is
lost or reordered."""

from __future__ import annotations

import asyncio
from typing import Any

from webhook.server.connection.turns import HELD_WRITE, CoalescedWrites, LoopTurn


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


def test_the_decisions_asked_for_in_a_turn_are_made_at_its_end_in_order() -> None:
    async def run() -> tuple[list[str], list[str], list[str]]:
        turn = LoopTurn(asyncio.get_running_loop())
        made: list[str] = []
        turn.decide(made.append, "first")
        turn.decide(made.append, "second")
        within = list(made)
        await asyncio.sleep(0)
        after = list(made)
        turn.decide(made.append, "next turn's")
        await asyncio.sleep(0)
        return within, after, made

    assert asyncio.run(run()) == ([], ["first", "second"], ["first", "second", "next turn's"])


def test_a_decision_that_raises_is_reported_and_the_others_of_its_turn_are_made() -> None:
    async def run() -> tuple[list[str], list[dict[str, Any]]]:
        loop = asyncio.get_running_loop()
        reported: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _, context: reported.append(context))
        turn = LoopTurn(loop)
        made: list[str] = []

        def broken(request: str) -> None:
            raise ValueError(f"a bug deciding {request}")

        turn.decide(made.append, "before")
        turn.decide(broken, "this one")
        turn.decide(made.append, "after")
        await asyncio.sleep(0)
        return made, reported

    made, reported = asyncio.run(run())
    assert made == ["before", "after"]
    [context] = reported
    assert isinstance(context["exception"], ValueError) and str(context["exception"]) == "a bug deciding this one"


def _on_a_loop(steps: Any) -> list[Any]:
    async def run() -> list[Any]:
        recording = Recording()
        loop = asyncio.get_running_loop()
        steps(CoalescedWrites(recording, loop, LoopTurn(loop)))
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
        CoalescedWrites(recording, loop, LoopTurn(loop)).write(HEAD + b"body")
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
        turn = LoopTurn(loop)
        a, b, c = Recording(), Recording(), Recording()
        first, second, third = (CoalescedWrites(t, loop, turn) for t in (a, b, c))
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
