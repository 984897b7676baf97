"""The members of a JSON object that a read model reads, and nothing else.

A read model ignores every member it does not declare (a PodCliqueSet's pod specs above all), so
whatever a decision on the model says depends only on the declared members: two objects that agree
on them are read as the same model. ``read_members`` keeps exactly those members, with values of the
wrong type kept as they are (reading them then fails the same way), so the result is a key under
which a decision can be remembered (``core.pcs.decisions``).
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel

Plan = dict[str, "Member"]
Member = tuple[str, "Plan | None"]
"""How one member is read: ``one`` (a nested model) or ``many`` (a list of them), with the nested
model's plan; or ``raw`` (taken as it is), with None."""


def _nested(annotation: Any) -> tuple[str, type[BaseModel] | None]:
    """Whether a field holds a model, a list of models, or anything else."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        choices = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(choices) != 1:
            return "raw", None
        return _nested(choices[0])
    if typing.get_origin(annotation) is list:
        kind, model = _nested(typing.get_args(annotation)[0])
        return ("many", model) if kind == "one" else ("raw", None)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "one", annotation
    return "raw", None


@cache
def plan(model: type[BaseModel]) -> Plan:
    members: Plan = {}
    for name, field in model.model_fields.items():
        kind, nested = _nested(field.annotation)
        members[field.alias or name] = (kind, plan(nested) if nested is not None else None)
    return members


def read_members(model: type[BaseModel], value: Any) -> Any:
    """``value`` with only the members ``model`` declares, recursively."""
    return _read(plan(model), value)


def _read(members: Plan, value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    kept = {}
    for name, (kind, nested) in members.items():
        if name not in value:
            continue
        member = value[name]
        if nested is None:
            kept[name] = member
        elif kind == "one":
            kept[name] = _read(nested, member)
        else:
            kept[name] = [_read(nested, item) for item in member] if isinstance(member, list) else member
    return kept
