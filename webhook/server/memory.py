"""Memory given back to the system once connections close (DECISIONS.md §2.1 has the figures),
through glibc's public ``malloc_trim``.

glibc keeps what a burst of connections freed: their TLS state is small blocks among others that
live on, so the heap cannot shrink from its top, and resident memory stays where the burst took it
(five bursts of 3,000 TLS connections: 235, 349, 441, 502 MiB). ``malloc_trim(0)`` hands the free
pages inside the heap back to the kernel: 103 MiB after each of the same bursts. It takes up to about
30 ms with a burst's worth to return, 0.1 ms with nothing, so it is called from a thread (ctypes lets
go of the GIL) once enough connections have closed since the last call, or a while after any has.
glibc's thresholds are left alone: fixing its mmap threshold made each connection's 256 KiB TLS read
buffer a mapping of its own, but also every TLS read, which cost 20 µs a request.
Where the C library is not glibc (musl has no ``malloc_trim``), nothing is done.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
from collections.abc import Callable

log = logging.getLogger("webhook.server.memory")

CHECK = 5.0
"""Seconds between looks at how many connections have closed."""
CLOSED = 256
"""Connections closed since the last trim that make the next look trim."""
AT_LEAST = 60.0
"""Seconds after which any connection closed since the last trim makes the next look trim."""


def _trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    name = ctypes.util.find_library("c")
    function = None if name is None else getattr(ctypes.CDLL(name), "malloc_trim", None)
    if function is None:
        return None
    function.argtypes, function.restype = [ctypes.c_size_t], ctypes.c_int
    trim: Callable[[int], int] = function
    return trim


class Trimmer:
    """Gives freed heap back once connections have closed: ``closed()`` says how many ever have."""

    def __init__(self, closed: Callable[[], int]) -> None:
        self.closed = closed
        self.trim = _trim()
        self.trimmed = 0
        """How many had closed at the last trim."""
        self.trims = 0

    async def run(self) -> None:
        if self.trim is None:
            log.debug("no malloc_trim in this C library: freed memory stays with the process")
            return
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            await asyncio.sleep(CHECK)
            closed = self.closed()
            if closed - self.trimmed >= CLOSED or (closed > self.trimmed and loop.time() - last >= AT_LEAST):
                self.trimmed, last = closed, loop.time()
                await asyncio.to_thread(self.trim, 0)
                self.trims += 1
