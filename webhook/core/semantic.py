"""apimachinery's ``equality.Semantic.DeepEqual`` for the raw claim-template mappings.

Go compares typed structs, where an absent field, ``null``, ``""``, ``[]`` and ``{}`` are all the
zero value, and quantities compare by value. The raw mappings are normalised to that view before
comparing: empty values are dropped and the values of ``capacity.requests`` become numbers.
List order still matters, as it does in Go.
"""

from __future__ import annotations

from typing import Any

from webhook.core import quantity


def normalise(value: Any, parent_key: str = "", key: str = "") -> Any:
    if isinstance(value, dict):
        quantities = key == "requests" and parent_key == "capacity"
        result = {}
        for k, v in value.items():
            if quantities and isinstance(v, str):
                parsed = quantity.parse(v)
                result[k] = v if parsed is None else parsed
                continue
            normalised = normalise(v, key, k)
            if not _is_empty(normalised):
                result[k] = normalised
        return result
    if isinstance(value, list):
        return [normalise(item, parent_key, key) for item in value]
    return value


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def equal(a: Any, b: Any) -> bool:
    return bool(normalise(a) == normalise(b))
