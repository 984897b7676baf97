"""Where the webhook could not decode the templates (code 400, before any rule), as the policy's CEL.

Once the API server has checked Grove's CRD schema, two things can still stop the webhook's Go
types from holding a template: a capacity that is no quantity, and opaque parameters nested more
than the webhook reads. The new object's templates are always decoded; on UPDATE the old
object's are too when they differ from the new ones, as the webhook decodes them to compare.
"""

from __future__ import annotations

from webhook.core.gocompat import dra
from webhook.core.gocompat.gotypes import STRING, Field, GoType, Slice, Struct
from webhook.core.pcs.handler import PODCLIQUESET
from webhook.policy import cel, gotypes
from webhook.policy.cel import Text
from webhook.policy.rules import TEMPLATES, Variable

_SPEC = Struct(dra.TEMPLATE_SPEC.go_name, tuple(f for f in dra.TEMPLATE_SPEC.fields if f.name != "metadata"))
TEMPLATE_CONFIGS: GoType = Slice(Struct(dra.TEMPLATE_CONFIG.go_name, (Field("name", STRING), Field("templateSpec", _SPEC))))
"""The templates as the webhook decodes them, less ``templateSpec.metadata``: Grove's CRD declares
it an object without properties, so the API server prunes everything in it before any admission
check (and the webhook, called by the API server, sees it empty too)."""


def _problems(templates: str) -> str:
    return gotypes.problems(TEMPLATE_CONFIGS, templates, Text.of(str(TEMPLATES)))


def _refusal(field: str, problems: str) -> str:
    return str(Text.of(f"cannot decode request.{field} as {PODCLIQUESET}: ") + Text.expr(problems))


_OLD = cel.bind(
    "p", _problems("variables.oldTemplates"), f"p != '' ? {_refusal('oldObject', 'p')} : ''"
)

VARIABLES: list[Variable] = [
    ("templateProblems", _problems("variables.templates")),
    (
        "undecodable",
        f"variables.templateProblems != '' ? {_refusal('object', 'variables.templateProblems')}"
        f" : (request.operation == 'UPDATE' && variables.templates != variables.oldTemplates ? {_OLD} : '')",
    ),
]
"""``undecodable``: why the webhook would answer code 400, or ``''``."""
