"""Go's texts of values, so that messages match Grove's byte for byte: ``%q`` for plain strings and
``encoding/json`` for everything else (not Python's ``json.dumps``: HTML escaping, escape sequences
and spaces differ), and ``strconv.Atoi``'s reading and errors."""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import orjson

from webhook.core.gocompat.rawjson import RawJSON

_HTML_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})
"""What Go's encoder escapes beyond what orjson does (orjson writes these five literally)."""
_UINT64_MAX = 2**64 - 1

_QUOTE_ESCAPES = {
    '"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f",
    "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
}


def json_string(value: str) -> str:
    """A string as Go's ``json.Marshal`` writes it: orjson's escapes and Go's HTML-safe ones."""
    return orjson.dumps(value).decode().translate(_HTML_SAFE)


def quote(value: str) -> str:
    """A string as Go's ``strconv.Quote`` (``%q``) writes it."""
    if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'
    out = ['"']
    for char in value:
        escaped = _QUOTE_ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def marshal(value: Any) -> str:
    """As Go's ``json.Marshal``: compact, a ``GoMap``'s keys sorted, a struct's in order, a
    ``RawJSON`` as written."""
    if value is None:
        return "null"
    if isinstance(value, RawJSON):
        return value.compact()
    if isinstance(value, Mapping):
        return _object(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "[" + ",".join(marshal(item) for item in value) + "]"
    return _scalar(value)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json_string(value)
    if isinstance(value, int | float):
        return str(value) if isinstance(value, int) else _float(value)
    raise TypeError(f"cannot render {type(value).__name__} as Go JSON")


def _object(value: Mapping[Any, Any]) -> str:
    keys = sorted(value) if isinstance(value, GoMap) else list(value)
    return "{" + ",".join(f"{json_string(str(k))}:{marshal(value[k])}" for k in keys) + "}"


def _float(value: float) -> str:
    """Go's ``float64`` encoding: the shortest digits that round-trip, positional unless the value
    is below 1e-6 or from 1e21 on, and a one-digit negative exponent written without its zero."""
    if value and (abs(value) < 1e-6 or abs(value) >= 1e21):
        text = repr(value)
        mantissa, _, exponent = text.partition("e")
        if exponent.startswith("-0"):
            exponent = "-" + exponent[2:]
        return f"{mantissa}e{exponent}"
    return format(Decimal(repr(value)).normalize(), "f")


class GoMap(dict[str, Any]):
    """A mapping that Go would hold as a ``map`` (its JSON keys come out sorted)."""


def atoi(text: str) -> int:
    """Go's ``strconv.Atoi``, whose errors are part of the pod webhook's messages (BEHAVIOUR.md
    §5.1); Python's ``int`` takes spaces and ``_``. Go stops at the first problem, so a number that
    overflows before a bad character is out of range, not bad syntax."""
    if text.isascii() and text.isdigit() and len(text) < 19:
        return int(text)  # the usual label: a few plain digits, never out of range
    return _read_digits(text)


def _read_digits(text: str) -> int:
    digits = text[1:] if text.startswith(("+", "-")) else text
    if not digits:
        raise _atoi_error(text, "invalid syntax")
    value = 0
    for char in digits:
        if not "0" <= char <= "9":
            raise _atoi_error(text, "invalid syntax")
        value = value * 10 + ord(char) - ord("0")
        if value > _UINT64_MAX:
            break
    if text.startswith("-"):
        value = -value
    if not -(2**63) <= value < 2**63:
        raise _atoi_error(text, "value out of range")
    return value


def _atoi_error(text: str, problem: str) -> ValueError:
    return ValueError(f"strconv.Atoi: parsing {quote(text)}: {problem}")


def _each_byte(err: UnicodeError) -> tuple[str, int]:
    assert isinstance(err, UnicodeDecodeError)
    return "\ufffd" * (err.end - err.start), err.end


codecs.register_error("go-replace", _each_byte)

_ESCAPE = re.compile(r"\\(u[dD][89abAB][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?|u[dD][c-fC-F][0-9a-fA-F]{2}|.)", re.DOTALL)
"""An escape: a surrogate pair, a lone surrogate (five characters after the backslash), or any other."""


def _surrogate(match: re.Match[str]) -> str:
    return "\\ufffd" if len(match.group(1)) == 5 else match.group()


def go_text(body: bytes) -> bytes:
    """JSON text as Go's ``encoding/json`` reads its strings: each byte that is not UTF-8, and each
    ``\\u`` escape of a lone surrogate, as U+FFFD (orjson refuses both)."""
    text = body.decode("utf-8", "go-replace")
    if "\\" in text:
        text = _ESCAPE.sub(_surrogate, text)
    return text.encode()
