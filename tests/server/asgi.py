"""Calling an app in-process (no sockets) from synchronous tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx


def call(app: Any, method: str, path: str, content: bytes | AsyncIterator[bytes] | None = None, headers: dict[str, str] | None = None) -> httpx.Response:
    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="https://webhook.test") as client:
            response = await client.request(method, path, content=content, headers=headers)
            await response.aread()
            return response

    return asyncio.run(send())


async def chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    """The body as a stream with no Content-Length, as a chunked upload arrives."""
    for start in range(0, len(data), size):
        yield data[start : start + size]
