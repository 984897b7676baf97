"""A coroutine run at once until it first waits (``webhook.server.connection.eager``): one that waits for
nothing is done before the call returns; one that waits goes on in a task exactly as a task of it
would have, results, exceptions and cancellation included."""

from __future__ import annotations

import asyncio
import pytest

from webhook.server.connection.eager import run_eagerly


def test_a_coroutine_that_waits_for_nothing_is_done_before_the_call_returns() -> None:
    async def scenario() -> None:
        seen: list[str] = []

        async def decide() -> None:
            seen.append("decided")

        assert run_eagerly(decide()) is None
        assert seen == ["decided"]

    asyncio.run(scenario())


def test_one_that_waits_takes_its_futures_results_and_exceptions_in_a_task() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        first, second = loop.create_future(), loop.create_future()
        seen: list[object] = []

        async def decide() -> None:
            seen.append(await first)
            await asyncio.sleep(0)
            try:
                await second
            except LookupError as err:
                seen.append(err.args[0])

        task = run_eagerly(decide())
        assert seen == [] and task is not None
        first.set_result("result")
        await asyncio.sleep(0.01)
        second.set_exception(LookupError("exception"))
        await task
        assert seen == ["result", "exception"]

    asyncio.run(scenario())


def test_a_cancellation_reaches_the_coroutine_and_the_future_it_waits_for() -> None:
    async def scenario() -> None:
        waited = asyncio.get_running_loop().create_future()
        seen: list[str] = []

        async def decide() -> None:
            try:
                await waited
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise

        task = run_eagerly(decide())
        assert task is not None
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen == ["cancelled"] and waited.cancelled()

    asyncio.run(scenario())


def test_a_task_cancelled_before_it_began_closes_the_coroutine() -> None:
    async def scenario() -> None:
        seen: list[str] = []

        async def decide() -> None:
            try:
                await asyncio.Event().wait()
            finally:
                seen.append("cleaned up")

        task = run_eagerly(decide())
        assert task is not None
        task.cancel()
        await asyncio.wait([task])
        assert seen == ["cleaned up"]

    asyncio.run(scenario())
