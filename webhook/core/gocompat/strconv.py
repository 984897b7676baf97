"""Go's ``strconv.Atoi``: Grove reads replica indices from labels with it, and its error texts are
part of the pod webhook's messages (BEHAVIOUR.md §5.1)."""

from __future__ import annotations

from webhook.core.gocompat import gojson

_UINT64_MAX = 2**64 - 1


def atoi(text: str) -> int:
    """Go's ``strconv.Atoi``, with its error texts (Python's ``int`` accepts spaces and ``_``).

    Go reads the digits one by one and stops at the first problem, so a number that overflows
    before a bad character is out of range, not bad syntax.
    """
    if text.isascii() and text.isdigit() and len(text) < 19:
        return int(text)  # the usual label: a few plain digits, never out of range
    return _read_digits(text)


def _read_digits(text: str) -> int:
    """``atoi`` of a text with a sign, many digits or a bad character, read as Go reads it."""
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
    return ValueError(f"strconv.Atoi: parsing {gojson.quote(text)}: {problem}")
