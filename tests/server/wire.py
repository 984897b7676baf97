"""A transport for a connection's protocol driven in-process: it records what is written (or only
counts the writes, for benchmarks), and reading and flow control are no-ops."""

from __future__ import annotations

import asyncio
from typing import Any


class Wire(asyncio.Transport):
    def __init__(self, record: bool = True) -> None:
        super().__init__()
        self.record = record
        self.data = bytearray()
        self.writes = 0
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes += 1
        if self.record:
            self.data += data

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass
