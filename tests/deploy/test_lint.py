"""``helm lint --strict`` passes, and no template reads a key that a map may lack.

Helm's lint action is run through the same library that renders the chart. ``--strict`` makes
``helm lint`` fail on warnings as well as errors, so no message above INFO may remain, with the
default values and with the values of each certificate mode and of user selectors (the library
lints a chart directory with its own values.yaml, so those run on a copy of the chart).

Helm before 3.2 also rendered ``helm lint --strict`` with Go's ``missingkey=error``, under which
reading a missing key of a map by field (``$selector.matchExpressions`` of a selector given as
``{}``) fails. The library cannot render that way, so the last test checks the templates
themselves: a variable's fields are read only where they always exist (a values.yaml path, the
root context, a certificate from genCA), and other maps are read with ``get``.
"""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from deploy.chart import CHART, lookup, template_files, values
from deploy.helm import ERROR, WARNING, Helm

VARIANTS: dict[str, dict[str, Any]] = {
    "selfSigned": {"certificates": {"mode": "selfSigned"}},
    "certManager": {"certificates": {"mode": "certManager"}},
    "certManager with an issuer": {"certificates": {"mode": "certManager", "certManager": {
        "issuerRef": {"name": "corp-ca", "kind": "ClusterIssuer"}}}},
    "existingSecret": {"certificates": {"mode": "existingSecret", "existingSecret": {
        "name": "serving", "caBundle": "Q0EK"}}},
    "selectors": {"webhooks": {
        "validating": {"namespaceSelector": {"matchLabels": {"team": "a"}}},
        "mutating": {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "Exists"}]},
                     "objectSelector": {"matchLabels": {"app": "x"}}}}},
    "no reconciler, a ServiceMonitor": {"reconciler": {"enabled": False}, "serviceMonitor": {"enabled": True}},
    "reconciler deployment, monitors, NetworkPolicy": {
        "reconciler": {"mode": "deployment", "podDisruptionBudget": {"maxUnavailable": 1}},
        "serviceMonitor": {"enabled": True}, "podMonitor": {"enabled": True}, "networkPolicy": {"enabled": True}},
    "namespaced RBAC": {"server": {"namespaces": ["team-a", "team-b"]}, "reconciler": {"namespaces": ["team-a"]}},
    "no RBAC, no hook": {"rbac": {"create": False}, "unregisterHook": {"enabled": False}},
    "a server outside the cluster": {"webhooks": {"url": "https://127.0.0.1:9443"}},
    "the ValidatingAdmissionPolicy alone": {"validation": {"mode": "policy", "policy": {"failurePolicy": "Ignore"}}},
    "webhook and policy": {"validation": {"mode": "both", "policy": {"namespaceSelector": {"matchLabels": {"team": "ml"}}}}},
    "platform values": {
        "hostNetwork": True, "commonLabels": {"team": "platform"}, "image": {"registry": "r.example.com", "digest": "sha256:" + "a" * 64},
        "extraVolumes": [{"name": "x", "emptyDir": {}}], "extraVolumeMounts": [{"name": "x", "mountPath": "/x"}],
        "service": {"annotations": {"a": "b"}}, "podDisruptionBudget": {"maxUnavailable": "50%"},
        "webhooks": {"annotations": {"a": "b"}, "mutating": {"matchConditions": [{"name": "all", "expression": "true"}]}},
        "server": {"extraArgs": ["--body-timeout", "20"], "livenessProbe": {"periodSeconds": 20}},
        "global": {"imageRegistry": "m.example.com"}},
}


def merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def chart_with(tmp_path: Path, values_yaml: dict[str, Any]) -> Path:
    chart = tmp_path / CHART.name
    shutil.copytree(CHART, chart)
    (chart / "values.yaml").write_text(yaml.safe_dump(values_yaml))
    return chart


def test_helm_lint_strict_passes(helm: Helm) -> None:
    result = helm.lint(CHART)
    assert result.charts == 1
    assert result.at_least(WARNING) == [] and result.errors == 0, (
        f"helm lint --strict fails on (severity, file) {result.at_least(WARNING)}")


@pytest.mark.parametrize("over", VARIANTS.values(), ids=list(VARIANTS))
def test_helm_lint_strict_passes_in_every_mode(helm: Helm, tmp_path: Path, over: dict[str, Any]) -> None:
    result = helm.lint(chart_with(tmp_path, merged(values(), over)))
    assert result.charts == 1
    assert result.at_least(WARNING) == [] and result.errors == 0, result.at_least(WARNING)


def test_the_lint_sees_a_broken_template(helm: Helm, tmp_path: Path) -> None:
    chart = chart_with(tmp_path, values())
    (chart / "templates" / "broken.yaml").write_text("kind: [\n")
    result = helm.lint(chart)
    assert (ERROR, "templates/broken.yaml") in result.messages and result.errors >= 1


_COMMENT = re.compile(r"\{\{-?\s*/\*.*?\*/\s*-?\}\}", re.S)
_ACTION = re.compile(r"\{\{-?((?:\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`|[^\"`])*?)-?\}\}", re.S)
"""An action, whose string literals may hold braces (a Prometheus template in an alert's text)."""
_STRING = re.compile(r"\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`")
_ASSIGNMENT = re.compile(r"(\$\w+)\s*:?=\s*(.+)", re.S)
_FIELD_READ = re.compile(r"(\$\w*)((?:\.\w+)+)")
#: Variables bound to the root context by the helpers called with (list $ ...).
_ROOT_ALIASES = {"$", "$root"}
#: Sprig functions whose result is a Go struct: its fields always exist.
_STRUCTS = ("genCA", "genCAWithKey", "genSignedCert", "genSignedCertWithKey", "genSelfSignedCert")


def field_reads() -> list[tuple[str, str, str, str | None]]:
    """(file, variable, fields read, why that is safe or None) for every ``$var.a.b`` in the templates."""
    found = []
    for path in template_files():
        actions = [_STRING.sub('""', a).strip() for a in _ACTION.findall(_COMMENT.sub("", path.read_text()))]
        assigned: dict[str, set[str]] = {}
        for action in actions:
            if match := _ASSIGNMENT.match(action):
                assigned.setdefault(match[1], set()).add(match[2].strip())
        for action in actions:
            for match in _FIELD_READ.finditer(action):
                variable, fields = match[1], match[2]
                found.append((path.name, variable, fields, _safe(variable, fields, assigned.get(variable, set()))))
    return found


def _safe(variable: str, fields: str, assignments: set[str]) -> str | None:
    if variable in _ROOT_ALIASES:
        top, _, rest = fields.lstrip(".").partition(".")
        if top != "Values":
            return "root context" if top in ("Release", "Chart", "Capabilities", "Template", "Files") else None
        return _in_values(rest)
    if assignments and all(a.startswith(_STRUCTS) for a in assignments):
        return "a certificate struct"
    paths = {a.removeprefix(".Values.") for a in assignments if re.fullmatch(r"\.Values(\.\w+)+", a)}
    if assignments and len(paths) == len(assignments):
        return all(_in_values(p + fields) for p in paths) and "values.yaml" or None
    return None


def _in_values(dotted: str) -> str | None:
    try:
        lookup(values(), dotted.lstrip("."))
    except KeyError:
        return None
    return "values.yaml"


def test_no_template_reads_a_field_a_map_may_lack() -> None:
    reads = field_reads()
    assert ("certificate-certmanager.yaml", "$issuer", ".name", "values.yaml") in reads
    unsafe = [f"{file}: {variable}{fields}" for file, variable, fields, why in reads if why is None]
    assert unsafe == [], ("these reads fail under missingkey=error when the map lacks the key; "
                          f"read them with get or dig: {unsafe}")
