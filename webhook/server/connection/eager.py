"""A coroutine run at once by its caller until it first waits, and in a task only from there on.

Most webhook decisions wait for nothing, and a task for each would cost its making and a turn of
the event loop before the answer is written. Python 3.12's eager tasks do the same; 3.11, which
the server supports, has none.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Coroutine
from typing import Any


def run_eagerly(coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
    """Runs ``coroutine`` here; if it waits, the task it goes on in (None when it is done). A task
    cancelled before its first step never runs its code: the coroutine is closed then, so that its
    own clean-up runs all the same."""
    try:
        waiting = coroutine.send(None)
    except StopIteration:
        return None
    task = asyncio.get_running_loop().create_task(resumed(coroutine, waiting))
    task.add_done_callback(lambda _: coroutine.close())
    return task


async def resumed(coroutine: Coroutine[Any, Any, None], waiting: Any) -> None:
    """Runs ``coroutine`` on from the future it waits for (None: it gave way for a turn of the
    loop), as the task it would have been: each future is waited for, then the coroutine resumed
    (the future's result or exception is its own to take); a cancellation is passed on to it, and
    to the future it was waiting for."""
    while True:
        try:
            if waiting is None:
                await asyncio.sleep(0)
            else:
                await asyncio.wait((waiting,))
        except asyncio.CancelledError as cancelled:
            if waiting is not None:
                waiting.cancel()
            step = functools.partial(coroutine.throw, cancelled)
        else:
            step = functools.partial(coroutine.send, None)
        try:
            waiting = step()
        except StopIteration:
            return
