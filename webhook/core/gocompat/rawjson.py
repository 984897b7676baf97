"""JSON kept as it was written, where Go keeps it so: a ``runtime.RawExtension`` (opaque device
``parameters``) holds the bytes its decoder was given, which Go compares byte for byte and
``json.Marshal`` writes back compacted (``2.50``, ``1e3``, ``-0.0`` and ``\\u00e9`` as written), where
a parsed value would be written ``2.5``, ``1000``, ``-0`` and ``é``.

orjson does not keep a value's text, so the few members that need it are found again in the body
(``as_sent``): only when a decision prints or compares them, the one place Grove does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

ANY = None
"""In a member path: every element of an array."""

Route = tuple[str | frozenset[str] | None, ...]
"""A path into a document: a key, any of several keys, or ``ANY`` element of an array."""

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SPACE = re.compile(rb"[ \t\n\r]*")
_SCALAR = re.compile(rb"[^ \t\n\r,\]}]+")
_NESTED = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_HTML = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}


@dataclass(frozen=True, slots=True)
class RawJSON:
    """A value as decoded (for its depth and shape) and the bytes it was written as."""

    value: Any
    text: bytes

    def compact(self) -> str:
        """As Go's ``json.Marshal`` writes a ``Marshaler``'s bytes: spaces between tokens dropped,
        and ``<``, ``>``, ``&``, U+2028 and U+2029 in strings escaped."""
        out, at = [], 0
        text = self.text.decode()
        for match in re.finditer(r'"(?:[^"\\]|\\.)*"', text, re.DOTALL):
            out.append(re.sub(r"\s+", "", text[at:match.start()]))
            out.append(match.group().translate(_HTML))
            at = match.end()
        out.append(re.sub(r"\s+", "", text[at:]))
        return "".join(out)


def _fragment(value: Any) -> Any:
    if isinstance(value, RawJSON):
        return orjson.Fragment(value.text)
    raise TypeError(f"{type(value).__name__} is not JSON")


def dumps(value: Any) -> bytes:
    """``value`` as orjson writes it, a ``RawJSON`` in it as written."""
    return orjson.dumps(value, default=_fragment, option=orjson.OPT_PASSTHROUGH_DATACLASS)


def as_sent(body: bytes, route: Route) -> dict[tuple[str | int, ...], bytes]:
    """The text of every value at ``route`` in the JSON document ``body`` (which has been parsed
    already, so is valid), by the keys and indexes it was found at; a repeated key's last value,
    as Go's decoder and orjson keep it."""
    found, _ = _members(body, _SPACE.match(body, 0).end(), route, ())  # type: ignore[union-attr]
    return found


def _members(body: bytes, at: int, route: Route, where: tuple[str | int, ...]) -> tuple[dict[tuple[str | int, ...], bytes], int]:
    """What ``route`` finds in the value starting at ``at``, and where the value ends."""
    if not route:
        end = _skip(body, at)
        return {where: body[at:end]}, end
    step, rest = route[0], route[1:]
    opening = body[at:at + 1]
    if opening == b"{" and step is not ANY:
        return _object(body, at, step, rest, where)
    if opening == b"[" and step is ANY:
        return _array(body, at, rest, where)
    return {}, _skip(body, at)


def _object(body: bytes, at: int, step: str | frozenset[str], rest: Route,
            where: tuple[str | int, ...]) -> tuple[dict[tuple[str | int, ...], bytes], int]:
    by_key: dict[str, dict[tuple[str | int, ...], bytes]] = {}
    at = _space(body, at + 1)
    while body[at:at + 1] != b"}":
        key_match = _STRING.match(body, at)
        assert key_match is not None
        key = orjson.loads(key_match.group())
        at = _space(body, _space(body, key_match.end()) + 1)  # past the colon
        if key == step or (isinstance(step, frozenset) and key in step):
            by_key[key], at = _members(body, at, rest, (*where, key))
        else:
            at = _skip(body, at)
        at = _space(body, at)
        if body[at:at + 1] == b",":
            at = _space(body, at + 1)
    return {path: text for found in by_key.values() for path, text in found.items()}, at + 1


def _array(body: bytes, at: int, rest: Route, where: tuple[str | int, ...]) -> tuple[dict[tuple[str | int, ...], bytes], int]:
    found: dict[tuple[str | int, ...], bytes] = {}
    at, index = _space(body, at + 1), 0
    while body[at:at + 1] != b"]":
        more, at = _members(body, at, rest, (*where, index))
        found.update(more)
        index += 1
        at = _space(body, at)
        if body[at:at + 1] == b",":
            at = _space(body, at + 1)
    return found, at + 1


def _space(body: bytes, at: int) -> int:
    return _SPACE.match(body, at).end()  # type: ignore[union-attr]


def _skip(body: bytes, at: int) -> int:
    """Where the value starting at ``at`` ends."""
    first = body[at:at + 1]
    if first == b'"':
        return _STRING.match(body, at).end()  # type: ignore[union-attr]
    if first not in (b"{", b"["):
        return _SCALAR.match(body, at).end()  # type: ignore[union-attr]
    depth = 0
    for match in _NESTED.finditer(body, at):
        token = match.group()
        if token in (b"{", b"["):
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
            if depth == 0:
                return match.end()
    raise ValueError("unterminated JSON value")
