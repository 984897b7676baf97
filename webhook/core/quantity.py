"""Kubernetes ``resource.Quantity`` values, so that ``1Gi`` and ``1073741824`` compare equal.

apimachinery's ``Semantic.DeepEqual`` compares quantities by value; a template whose capacity was
rewritten in another unit is not a change.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
            "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
            "P": Decimal("1e15"), "E": Decimal("1e18")}
_QUANTITY = re.compile(r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?")


def parse(text: str) -> Decimal | None:
    """The value of a quantity string, or None when it is not one (then it compares as text)."""
    match = _QUANTITY.fullmatch(text.strip())
    if not match:
        return None
    number, suffix = match.group(1), match.group(2) or ""
    try:
        value = Decimal(number)
        if suffix in _BINARY:
            return value * _BINARY[suffix]
        if suffix in _DECIMAL:
            return value * _DECIMAL[suffix]
        return value * (Decimal(10) ** int(suffix[1:]))
    except (InvalidOperation, ValueError):
        return None
