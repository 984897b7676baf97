"""Memory given back after connections close: glibc's heap trimmed once enough have closed, or a
while after any has, and never while none has (bench/connections.py measures what it gives back)."""

from __future__ import annotations

import asyncio
import platform

import pytest

from webhook.server import memory


async def until(condition: object, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + 5
    while not condition():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


async def trimmed(monkeypatch: pytest.MonkeyPatch) -> None:
    closed, trims = [0], []
    trimmer = memory.Trimmer(lambda: closed[0])
    trimmer.trim = lambda pad: trims.append(closed[0]) or 1
    task = asyncio.create_task(trimmer.run())
    closed[0] = 100
    await asyncio.sleep(memory.CHECK * 5)  # several looks: too few closed for a trim
    assert trims == []
    closed[0] = memory.CLOSED
    await until(lambda: trims == [memory.CLOSED], "the burst's trim")
    closed[0] += 3
    monkeypatch.setattr(memory, "AT_LEAST", 0.0)  # the while after a trickle has passed
    await until(lambda: trims == [memory.CLOSED, memory.CLOSED + 3], "the trickle's trim")
    await asyncio.sleep(memory.CHECK * 5)
    assert trims == [memory.CLOSED, memory.CLOSED + 3]  # none closed since: nothing to give back
    task.cancel()


def test_a_burst_of_closed_connections_is_trimmed_after_and_a_trickle_after_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "CHECK", 0.01)
    asyncio.run(trimmed(monkeypatch))


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc_trim")
def test_glibc_offers_the_trim() -> None:
    assert memory.Trimmer(lambda: 0).trim is not None
