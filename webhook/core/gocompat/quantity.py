"""Kubernetes ``resource.Quantity``, as the immutability rules compare (by value: ``1Gi`` is
``1073741824``) and print it (canonical, ``1024Mi`` as ``1Gi``, unless the text parsed was)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, ROUND_UP, Decimal, localcontext

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {e: s for s, e in _BINARY_SUFFIXES.items()}
_SHAPE = re.compile(r"([+-]?)0*+([0-9]*+)(?:\.([0-9]*+))?([eEinumkKMGTP]*+[+-]?[0-9]*+)")
"""Go's ``parseQuantityString``, possessive as it never goes back: else a long run of digits that
does not end as a quantity (``000...0x``) is retried in every split, cubic in its length."""
_NANO = Decimal("1e-9")
_MAX = Decimal(2**63 - 1)
_MAX_FAST_DIGITS = 18


@dataclass(frozen=True, slots=True)
class Quantity:
    value: Decimal
    text: str
    """What Go's ``json.Marshal`` writes (without the quotes)."""


ZERO = Quantity(Decimal(0), "0")


def parse(text: str) -> Quantity | None:
    """``ParseQuantity(strings.TrimSpace(text))``, or None where Go returns an error."""
    text = text.strip()
    if text == "0":
        return ZERO
    parts = _parts(text)
    if parts is None:
        return None
    sign, num, denom, (base, exponent, fmt) = parts
    magnitude = _magnitude(num, denom, base, exponent)
    value = -magnitude if sign == "-" else magnitude
    if fmt == "BinarySI" and 0 < magnitude < 1:
        fmt = "DecimalSI"
    cached = _is_canonical_text(num, denom, base, exponent, fmt)
    return Quantity(value, text if cached else canonical(value, fmt))


def _parts(text: str) -> tuple[str, str, str, tuple[int, int, str]] | None:
    """(sign, digits before the point, digits after it, the suffix's unit), or None if not a quantity."""
    match = _SHAPE.fullmatch(text) if text else None
    if match is None:
        return None
    unit = _unit(match.group(4))
    return None if unit is None else (match.group(1), match.group(2) or "0", match.group(3) or "", unit)


def _magnitude(num: str, denom: str, base: int, exponent: int) -> Decimal:
    """The number's size, at most ``_MAX``, rounded up to nanos as Go rounds it."""
    with localcontext() as ctx:
        # Exact, as Go's arbitrary-precision arithmetic: enough digits for the number times 2**-60,
        # and any exponent (a quantity's text may have thousands of digits, or e-2147483647).
        ctx.prec = len(num) + len(denom) + 80
        ctx.Emax, ctx.Emin = MAX_EMAX, MIN_EMIN
        number = Decimal(f"{num}.{denom}" if denom else num)
        magnitude = number.scaleb(exponent) if base == 10 else number * Decimal(base) ** exponent
        if magnitude > _MAX:
            magnitude = _MAX
        elif magnitude % _NANO:
            magnitude = magnitude.quantize(_NANO, rounding=ROUND_UP)
        return magnitude.normalize()


def _unit(suffix: str) -> tuple[int, int, str] | None:
    """(base, exponent, format) of a suffix, as apimachinery's suffixer interprets it."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], "DecimalSI"
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]):
        # Measured before ``int`` reads it: ``int`` refuses text of more than 4300 digits.
        digits = suffix[1:].lstrip("+-").lstrip("0") or "0"
        if len(digits) > len(str(2**31)):
            return None
        exponent = -int(digits) if suffix[1] == "-" else int(digits)
        return (10, exponent, "DecimalExponent") if abs(exponent) < 2**31 else None
    return None


def _is_canonical_text(num: str, denom: str, base: int, exponent: int, fmt: str) -> bool:
    """Go keeps the parsed text (``Quantity.s``) when its fast path finds it already canonical."""
    if len(num) + len(denom) > _MAX_FAST_DIGITS:
        return False
    if base == 2:
        value = int(num)
        return not denom and exponent % 10 == 0 and value & 0x07 != 0 and len(num) + exponent * 3 // 10 < 15
    scale = exponent - len(denom)
    shifted = num + denom
    return scale >= -9 and scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


def canonical(value: Decimal, fmt: str) -> str:
    """``Quantity.String()`` for a quantity without cached text (``CanonicalizeBytes``)."""
    if not value:
        return "0"
    if fmt == "BinarySI" and (-1024 < value < 1024 or value != value.to_integral_value()):
        fmt = "DecimalSI"
    if fmt == "BinarySI":
        amount, power = int(value), 0
        while amount % 1024 == 0:
            amount, power = amount // 1024, power + 1
        return f"{amount}{_BINARY_BY_EXPONENT.get(power * 10, '')}"
    return _decimal(value, fmt)


def _decimal(value: Decimal, fmt: str) -> str:
    """A DecimalSI or DecimalExponent quantity: an exponent that is a multiple of three."""
    sign, digits, exponent = value.as_tuple()
    amount = int("".join(map(str, digits)))
    assert isinstance(exponent, int)
    while amount % 10 == 0:
        amount, exponent = amount // 10, exponent + 1
    while exponent % 3:
        amount, exponent = amount * 10, exponent - 1
    number = f"{'-' if sign else ''}{amount}"
    if fmt == "DecimalExponent":
        return number if exponent == 0 else f"{number}e{exponent}"
    return number + _DECIMAL_BY_EXPONENT.get(exponent, "")
