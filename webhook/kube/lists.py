"""Reading a List response one item at a time: a page parsed whole is many times its size in
Python objects, most of them pod specs that no cache keeps. ``read_list`` walks the top level of the
List by hand and parses each item on its own (with the C scanner behind ``json.loads``), handing it
over before the next is read, so that one parsed item at most is alive at a time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_decode = json.JSONDecoder().raw_decode
_SPACE = re.compile(r"[ \t\n\r]*")


class ListError(ValueError):
    """The body is not a JSON object, or not well-formed."""


def _value(text: str, at: int) -> tuple[Any, int]:
    try:
        return _decode(text, at)
    except json.JSONDecodeError as err:
        raise ListError(str(err)) from None


def _skip(text: str, at: int, expected: str = "") -> int:
    """The position after the white space at ``at`` (and after ``expected``, which must come next)."""
    end = _SPACE.match(text, at)
    at = end.end() if end else at
    if expected:
        if not text.startswith(expected, at):
            raise ListError(f"expected {expected!r} at character {at}")
        at += len(expected)
    return at


def _each(text: str, at: int, close: str, read: Callable[[int], int]) -> int:
    """Reads the elements of an object or array opened before ``at`` with ``read`` (from where one
    starts to where it ends); the position after ``close``."""
    at = _skip(text, at)
    if text.startswith(close, at):
        return at + 1
    while True:
        at = _skip(text, read(_skip(text, at)))
        if text.startswith(close, at):
            return at + 1
        at = _skip(text, at, ",")


def read_list(data: bytes, take: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Every member of the List in ``data`` except ``items``, each of which is given to ``take`` as
    soon as it is parsed (items that are not objects are skipped). Raises ``ListError``, or
    ``RecursionError`` for a value nested deeper than Python can parse."""
    text = data.decode()
    members: dict[str, Any] = {}

    def item(at: int) -> int:
        value, at = _value(text, at)
        if isinstance(value, dict):
            take(value)
        return at

    def member(at: int) -> int:
        name, at = _value(text, at)
        if not isinstance(name, str):
            raise ListError(f"expected a member name before character {at}")
        at = _skip(text, _skip(text, at, ":"))
        if name == "items" and text.startswith("[", at):
            return _each(text, at + 1, "]", item)
        members[name], at = _value(text, at)
        return at

    _each(text, _skip(text, 0, "{"), "}", member)
    return members
