"""The chart's files as data: where it is, its values, and the ``.Values`` paths its templates use."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "grove-sharing-webhook"
TEMPLATES = CHART / "templates"

#: Values whose content is a Kubernetes object (a security context, a resources block):
#: documented as a whole in the chart README, not key by key.
OPAQUE = frozenset({"podSecurityContext", "securityContext", "resources.webhook", "resources.reconciler", "unregisterHook.resources"})

_VALUES_PATH = re.compile(r"\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def values() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((CHART / "values.yaml").read_text())
    return loaded


def chart_metadata() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((CHART / "Chart.yaml").read_text())
    return loaded


def template_files() -> list[Path]:
    return sorted(p for p in TEMPLATES.iterdir() if p.suffix in (".yaml", ".tpl", ".txt"))


def values_paths_used() -> dict[str, set[str]]:
    """Each ``.Values.a.b`` path written in a template, with the files that use it."""
    used: dict[str, set[str]] = {}
    for path in template_files():
        for match in _VALUES_PATH.finditer(path.read_text()):
            used.setdefault(match.group(1).lstrip("."), set()).add(path.name)
    return used


def lookup(tree: dict[str, Any], dotted: str) -> Any:
    """The value at ``a.b.c``; KeyError when a key is missing."""
    node: Any = tree
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            raise KeyError(dotted)
        node = node[key]
    return node


def documented_keys(tree: dict[str, Any], prefix: str = "") -> Iterator[str]:
    """Every key a user may set, as a dotted path: leaves, empty maps, and opaque objects."""
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and path not in OPAQUE:
            yield from documented_keys(value, path + ".")
        else:
            yield path
