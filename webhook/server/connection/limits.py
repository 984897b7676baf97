"""What one connection may take of the server's time and memory, and the answer past a limit.

The limits are ``webhook serve``'s options; ``webhook.server.connection.protocol`` applies them to each
connection before any application code sees a request, and refuses with ``refusal``'s answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from uvicorn.protocols.http.httptools_impl import STATUS_LINE

from webhook.server.budget import RETRY_AFTER
from webhook.settings import ServeSettings

WRITE_HIGH_WATER = 64 * 1024
"""Bytes of an answer waiting in a connection's TLS transport above which it pauses the writer (and
the write timeout starts). uvloop's default, 512 KiB, would let a client that does not read leave
that much behind each connection unseen."""


REFUSAL_LINGER = 0.5
"""Seconds a refused connection stays open for its client to read the refusal, as Go's server waits
before it closes a connection it answered early; a client still sending then is cut off rather than
read into the void for the whole TLS close."""


@dataclass(frozen=True, slots=True)
class Limits:
    header_timeout: float
    head_bytes: int
    header_line_bytes: int
    headers: int
    write_timeout: float

    @classmethod
    def of(cls, settings: ServeSettings) -> Limits:
        return cls(
            settings.header_timeout,
            settings.max_header_bytes,
            settings.max_header_line_bytes,
            settings.max_headers,
            settings.write_timeout,
        )


class HeadRefused(Exception):
    """A request head breaks a limit: raised in a parser callback, with the client's message."""


def refusal(status: int, message: str) -> bytes:
    """A whole response that refuses a request and closes its connection (431, or 503 with
    ``Retry-After``), with the JSON error body every other refusal has."""
    body = orjson.dumps({"error": message})
    retry = b"retry-after: " + RETRY_AFTER + b"\r\n" if status == 503 else b""
    return b"".join((
        STATUS_LINE[status],
        b"content-type: application/json\r\ncontent-length: ",
        str(len(body)).encode(),
        b"\r\nconnection: close\r\n",
        retry,
        b"\r\n",
        body,
    ))
