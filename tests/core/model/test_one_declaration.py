"""Grove's objects are declared once (docs/ARCHITECTURE.md, "Adding a rule"): no module of
``webhook/`` but the model declares a field named as one of Grove's resource-sharing fields, so a
rule that needs a new field changes the model, the rule and its test, as in Grove."""

from __future__ import annotations

import ast
from pathlib import Path

import webhook

PACKAGE = Path(webhook.__file__).parent
MODEL = PACKAGE / "core" / "model" / "podcliqueset.py"
FIELDS = {"resourceSharing", "resourceClaimTemplates", "childCliqueNames", "childScalingGroupNames", "templateSpec"}
"""Grove's JSON names of the fields resource sharing adds to a PodCliqueSet."""


def declarations(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module declares a field by one of ``FIELDS``: a keyword naming an alias, the name
    given to a field (``Field("resourceSharing", ...)``, ``rename=``), or a typed member of a class
    body (a TypedDict's or a struct's)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            keywords = [k.value for k in node.keywords if k.arg in ("alias", "validation_alias", "serialization_alias", "name", "rename")]
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            named = node.args[:1] if callee in ("Field", "field") else []
            for value in [*keywords, *named]:
                if isinstance(value, ast.Constant) and value.value in FIELDS:
                    found.append((node.lineno, str(value.value)))
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name) and member.target.id in FIELDS:
                    found.append((member.lineno, member.target.id))
    return found


def test_grove_s_resource_sharing_fields_are_declared_in_the_model_alone() -> None:
    elsewhere = {
        f"{path.relative_to(PACKAGE.parent)}:{line} {name}"
        for path in PACKAGE.rglob("*.py")
        if path != MODEL
        for line, name in declarations(ast.parse(path.read_text()))
    }
    assert elsewhere == set()


def test_the_model_declares_them() -> None:
    assert {name for _, name in declarations(ast.parse(MODEL.read_text()))} == FIELDS
