"""Label and field selectors with the real API server's grammar and meaning.

Label selectors (k8s.io/apimachinery ``pkg/labels``): comma-joined requirements,
each one of ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``,
``k`` (exists), ``!k`` (does not exist), ``k>N``, ``k<N``. As there, ``!=`` and
``notin`` also match objects that lack the key. Field selectors take
``=``/``==``/``!=`` only, on the field labels the resource declares; anything
else is a `ValueError`, which the server answers with 400 like the real one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_KEY = r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
_VALUE = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_EQUALITY = re.compile(rf"^({_KEY})\s*(==|=|!=)\s*({_VALUE})$")
_SET = re.compile(rf"^({_KEY})\s+(in|notin)\s*\((.*)\)$")
_ORDER = re.compile(rf"^({_KEY})\s*(>|<)\s*(-?\d+)$")
_EXISTS = re.compile(rf"^({_KEY})$")
_NOT_EXISTS = re.compile(rf"^!\s*({_KEY})$")
_VALUE_ONLY = re.compile(rf"^{_VALUE}$")

Test = Callable[[Mapping[str, str]], bool]


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside ``( )`` of a set requirement."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _requirement(text: str) -> Test:
    if m := _EQUALITY.match(text):
        key, op, value = m.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if m := _SET.match(text):
        key, op, inner = m.groups()
        values = {v.strip() for v in inner.split(",")}
        if not inner.strip() or any(not _VALUE_ONLY.match(v) for v in values):
            raise ValueError(f"unable to parse requirement: invalid values in {text!r}")
        if op == "in":
            return lambda labels: key in labels and labels[key] in values
        return lambda labels: labels.get(key) not in values
    if m := _ORDER.match(text):
        key, op, bound = m.group(1), m.group(2), int(m.group(3))

        def ordered(labels: Mapping[str, str]) -> bool:
            try:
                number = int(labels[key])
            except (KeyError, ValueError):
                return False
            return number > bound if op == ">" else number < bound
        return ordered
    if m := _NOT_EXISTS.match(text):
        key = m.group(1)
        return lambda labels: key not in labels
    if m := _EXISTS.match(text):
        key = m.group(1)
        return lambda labels: key in labels
    raise ValueError(f"unable to parse requirement: {text!r}")


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector; the empty selector matches everything."""

    text: str
    tests: tuple[Test, ...]

    @classmethod
    def parse(cls, text: str | None) -> LabelSelector:
        text = text or ""
        return cls(text, tuple(_requirement(part) for part in _split_top_level(text)))

    def matches(self, obj: Mapping[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(test(labels) for test in self.tests)


def _lookup(obj: Mapping[str, Any], path: str) -> str:
    """The field at a dotted path as the string a field selector compares with."""
    node: Any = obj
    for part in path.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


@dataclass(frozen=True)
class FieldSelector:
    """A parsed field selector over the field labels of one resource."""

    text: str
    terms: tuple[tuple[str, bool, str], ...]  # (object path, equal?, value)

    @classmethod
    def parse(cls, text: str | None, field_labels: Mapping[str, str]) -> FieldSelector:
        terms = []
        for part in _split_top_level(text or ""):
            m = re.match(r"^([^=!]+?)\s*(==|=|!=)\s*(.*)$", part)
            if not m:
                raise ValueError(f"invalid selector: {part!r}; can't understand {part!r}")
            label, op, value = m.groups()
            if label not in field_labels:
                raise ValueError(f'field label not supported: {label}')
            terms.append((field_labels[label], op != "!=", value))
        return cls(text or "", tuple(terms))

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return all((_lookup(obj, path) == value) == equal for path, equal, value in self.terms)
