"""A spec as the validating webhook keeps it: the key it remembers what it read of a spec by
(``json_key``), and the members it hands over as their JSON text, parsed when read (``parsed``).

A review's spec is decoded in the body's one pass by the declarations of ``wire`` (``SpecWire``),
and remembered by them written back out: every member a decision reads, none it skips. A spec of a
body decoded whole (one the declarations do not take) is remembered by its JSON as parsed, written
out again; the templates' list, which the declarations keep as its JSON text, by that text.

Members kept as JSON text are parsed as orjson parses a whole body (``parsed``): a number orjson
refuses raises ``DecodeWhole``, and the body is then decoded whole and refused as before.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from webhook.core.model.meta import DecodeWhole
from webhook.core.model.wire import SpecWire

SpecJson = dict[str, Any] | SpecWire
"""A spec parsed (a body decoded whole), or as the review's decoding takes it."""


LARGEST_KEY = 64 * 1024
"""Bytes of JSON, at most, worth remembering a spec or templates by."""

_ENCODER = msgspec.json.Encoder()


def json_key(value: Any) -> bytes | None:
    """The JSON of a spec or a templates' list, as a key to remember what was read of it by: None
    for one larger than ``LARGEST_KEY``, or nested too deep to write (it is read every time)."""
    if type(value) is msgspec.Raw:
        text = bytes(value)
    elif type(value) is SpecWire:
        text = _ENCODER.encode(value)
    else:
        try:
            text = orjson.dumps(value)
        except orjson.JSONEncodeError:
            return None
    return text if len(text) <= LARGEST_KEY else None


def parsed(text: msgspec.Raw) -> Any:
    """A member kept as its JSON text, parsed as orjson parses a whole body (a view: no copy)."""
    try:
        return orjson.loads(memoryview(text))
    except orjson.JSONDecodeError:
        raise DecodeWhole from None
