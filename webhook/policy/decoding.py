"""What the webhook could not read (code 400, before any rule), as the policy's CEL.

Once the API server has checked Grove's CRD schema, two things can still stop the webhook from
reading a PodCliqueSet: an integer its model holds as an int32 that is out of that range (an API
server before 1.35 does not check the CRD's ``format: int32``), and a capacity that is no quantity.
(Opaque parameters nested deeper than the webhook reads, which it refuses too, are read as Go reads
them: ``cel``.) The order is the webhook's: the new object's model, on UPDATE the old one's,
then the new object's templates and, on UPDATE when they differ from the new ones, the old object's
(the webhook decodes them only to compare).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import PydanticKnownError

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pcs.rules import TEMPLATES
from webhook.core.pcs.validator import PODCLIQUESET
from webhook.policy import cel
from webhook.policy.cel import Text
from webhook.policy.rules import TEMPLATES_TYPE

Parts = tuple[str | None, ...]
"""A field path: member names, and None for each item of a list."""


def bounded(schema: dict[str, Any], defs: dict[str, Any], parts: Parts = ()) -> Iterator[tuple[Parts, int, int]]:
    """Each integer the model bounds, with its bounds, found in its JSON schema."""
    if "$ref" in schema:
        yield from bounded(defs[schema["$ref"].rpartition("/")[2]], defs, parts)
    for alternative in schema.get("anyOf", []):
        yield from bounded(alternative, defs, parts)
    if schema.get("type") == "integer" and "minimum" in schema:
        yield parts, schema["minimum"], schema["maximum"]
    for name, member in schema.get("properties", {}).items():
        yield from bounded(member, defs, (*parts, name))
    if "items" in schema:
        yield from bounded(schema["items"], defs, (*parts, None))


def _out_of_range(value: str, parts: Parts, path: Text, bounds: tuple[int, int], depth: int = 0) -> str:
    if not parts:
        low, high = bounds
        too_small = path + f": {PydanticKnownError('greater_than_equal', {'ge': low}).message()}"
        too_large = path + f": {PydanticKnownError('less_than_equal', {'le': high}).message()}"
        return f"({value} < {low} ? {too_small} : ({value} > {high} ? {too_large} : ''))"
    head, rest = parts[0], parts[1:]
    if head is None:
        i, x = f"r{depth}", f"y{depth}"
        inner = _out_of_range(x, rest, path.index(i), bounds, depth + 1)
        return f"{value}.transformList({i}, {x}, {inner}).filter({x}, {x} != '').join(', ')"
    member = f"{value}.{head}"
    inner = _out_of_range(member, rest, path.child(head) if path.parts else Text.of(head), bounds, depth)
    return f"(has({member}) ? {inner} : '')"


def model_problems(root: str) -> str:
    """Where the webhook's model of a PodCliqueSet cannot hold ``root`` (``object``, ``oldObject``)."""
    schema = TypeAdapter(PodCliqueSet).json_schema(by_alias=True)
    checks = [_out_of_range(root, parts, Text(), (low, high)) for parts, low, high in bounded(schema, schema.get("$defs", {}))]
    return f"[{', '.join(checks)}].filter(p, p != '').join(', ')"


def _template_problems(templates: str) -> str:
    return cel.problems(TEMPLATES_TYPE, templates, Text.of(TEMPLATES))


def _refusal(field: str, problems: str) -> str:
    return str(Text.of(f"cannot decode request.{field} as {PODCLIQUESET}: ") + Text.expr(problems))


def _first(*checks: tuple[str, str, str]) -> str:
    """The refusal of the first (condition, field, problems) whose problems are not ``''``."""
    if not checks:
        return "''"
    (condition, field, problems), rest = checks[0], checks[1:]
    found = cel.bind("p", problems, f"p != '' ? {_refusal(field, 'p')} : {_first(*rest)}")
    return found if condition == "true" else f"({condition} ? {found} : {_first(*rest)})"


UPDATE = "request.operation == 'UPDATE'"

REFUSAL = _first(
    ("true", "object", model_problems("object")),
    (UPDATE, "oldObject", model_problems("oldObject")),
    ("true", "object", _template_problems("variables.templates")),
    (f"{UPDATE} && variables.templates != variables.oldTemplates", "oldObject", _template_problems("variables.oldTemplates")),
)
"""Why the webhook would answer code 400, or ``''``. Not a variable: the type check the controller
manager runs compiles every variable again for each expression of the policy, and this one is
needed by one validation only."""
