"""apimachinery's own types inside the DRA structs, as ``gotypes`` describes a Go type: how JSON
decodes into each, what ``Semantic.DeepEqual`` compares and what ``json.Marshal`` prints.

``resource.Quantity`` compares by value and prints canonically, ``runtime.RawExtension`` is any
JSON kept as sent, ``metav1.Time`` compares as an instant and prints in UTC to the second.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson

from webhook.core.gocompat import gojson, quantity
from webhook.core.gocompat.gotypes import DecodeError, GoType


INVALID_QUANTITY = "invalid quantity"
"""What a quantity that does not parse is refused with, before the quoted text."""


class _Quantity(GoType):
    """``resource.Quantity``: a string (or number) in JSON, compared by value, printed canonically."""

    go_name = "resource.Quantity"

    def decode(self, value: Any) -> Any:
        if value is None:
            return quantity.ZERO
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.mismatch(value)
        parsed = quantity.parse(value if isinstance(value, str) else gojson.marshal(value))
        if parsed is None:
            raise DecodeError(f"{INVALID_QUANTITY} {gojson.quote(str(value))}")
        return parsed

    def key(self, value: Any) -> Any:
        return value.value

    def marshal(self, value: Any) -> Any:
        return value.text


MAX_RAW_DEPTH = 100
"""How deep an opaque value may nest. Go reads up to 10,000 levels, but such a value is compared
through orjson (which writes at most 255) and printed by recursive Python; no device configuration
comes near 100, and a value beyond it is refused (code 400) rather than failing the request."""
TOO_DEEP = f"nested more than {MAX_RAW_DEPTH} levels deep"


def deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects (lists, tuples, dicts) in ``value`` nest more than ``limit`` levels,
    found level by level (a check by recursion would fail on the very values it is there to refuse)."""
    level = [value]
    for _ in range(limit):
        level = [
            child for v in level if isinstance(v, list | tuple | dict) for child in (v.values() if isinstance(v, dict) else v)
        ]
        if not level:
            return False
    return any(isinstance(v, list | tuple | dict) for v in level)


class _Raw(GoType):
    """``runtime.RawExtension``: any JSON, kept as sent; Go compares and prints the bytes as they came."""

    go_name = "runtime.RawExtension"

    def decode(self, value: Any) -> Any:
        if deeper_than(value, MAX_RAW_DEPTH):
            raise DecodeError(TOO_DEEP)
        return value

    def key(self, value: Any) -> Any:
        return b"" if value is None else orjson.dumps(value)


class _Time(GoType):
    """``metav1.Time``: RFC 3339 in JSON, compared as instants, printed in UTC to the second; the zero
    time is printed ``null`` (and left out by ``omitzero``)."""

    go_name = "v1.Time"

    def decode(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.mismatch(value)
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None or "T" not in value.upper():
            raise DecodeError(f"invalid RFC 3339 time {gojson.quote(value)}")
        return parsed

    def marshal(self, value: Any) -> Any:
        if value is None:
            return None
        t = value.astimezone(UTC)
        return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"


QUANTITY = _Quantity()
RAW = _Raw()
TIME = _Time()
