"""The check on templates of other namespaces (DECISIONS.md §3.1) as the policy's CEL: a CREATE that
passed the rules and names a ResourceClaimTemplate of another namespace is denied unless the user
may ``get`` it, asked of the API server's authorizer. A message cannot ask the authorizer, so each
template gets a validation (a slot) whose message names it; each answer costs a large share of a
request's CEL budget, so the slots are few (docs/policy.md). Entries of all levels are gathered
into one list by their place, ``<level>.<owner>.<entry>`` (digits and letters, so joining and
splitting are exact), since CEL cannot flatten lists on every supported API server.
"""

from __future__ import annotations

from typing import Any

from webhook.core.gocompat.fielderrors import ErrorType
from webhook.core.pcs.authorization import TEMPLATE_REFUSED
from webhook.core.pcs.rules import CLIQUES, GROUPS, PCS_SHARING, TEMPLATE
from webhook.policy import cel
from webhook.policy.cel import Text
from webhook.policy.rules import Variable

SLOTS = 16
"""Templates of other namespaces one CREATE may name, within the request's budget."""

FOREIGN = "e.?namespace.orValue('') != '' && e.namespace != request.namespace"
OWNERS = (("c", "variables.cliques"), ("g", "variables.groups"))
"""The owners of lists after the PodCliqueSet's (``p``), in the rules' order: cliques, scaling groups."""


def _places() -> str:
    pcs = f"variables.sharing.transformList(i, e, {FOREIGN}, 'p.0.' + string(i)).join(',')"
    owned = [
        f"{owners}.transformList(o, w, w.?resourceSharing.orValue([]).transformList(i, e, {FOREIGN},"
        f" '{level}.' + string(o) + '.' + string(i)).join(',')).filter(s, s != '').join(',')"
        for level, owners in OWNERS
    ]
    return f"[{pcs}, {', '.join(owned)}].filter(s, s != '').join(',')"


def _entry(place: str) -> str:
    """The entry at ``place``, a variable holding its three parts."""
    return (
        f"({place}[0] == 'p' ? variables.sharing[int({place}[2])] : ({place}[0] == 'c'"
        f" ? variables.cliques[int({place}[1])].resourceSharing[int({place}[2])]"
        f" : variables.groups[int({place}[1])].resourceSharing[int({place}[2])]))"
    )


def _path(place: str) -> str:
    """The entry's ``namespace`` field path, e.g. ``spec.template.cliques[0].resourceSharing[1].namespace``."""
    pcs = Text.of(f"{PCS_SHARING}[") + Text.expr(f"{place}[2]") + "].namespace"
    owned = [
        Text.of(f"{path}[") + Text.expr(f"{place}[1]") + "].resourceSharing[" + Text.expr(f"{place}[2]") + "].namespace"
        for path in (CLIQUES, GROUPS)
    ]
    return f"({place}[0] == 'p' ? {pcs} : ({place}[0] == 'c' ? {owned[0]} : {owned[1]}))"


SPLIT = "f.split('.')"
KEY = "strings.quote(e.namespace) + strings.quote(e.name)"
"""A template's namespace and name as one text, the same for the same pair and only for it."""

VARIABLES: list[Variable] = [
    ("foreignPlaces", _places()),
    ("foreignEntries", "variables.foreignPlaces == '' ? [] : variables.foreignPlaces.split(',')"),
    ("foreignKeys", f"variables.foreignEntries.map(f, {cel.bind('s', SPLIT, cel.bind('e', _entry('s'), KEY))})"),
    ("foreign", "variables.foreignEntries.transformList(i, f, !variables.foreignKeys.exists(j, k, j < i && k == variables.foreignKeys[i]), f)"),
]
"""``foreign``: the place of the first entry naming each template of another namespace."""

ASKED = "request.operation != 'CREATE' || variables.createErrorCount > 0"
"""When nothing is asked: the webhook asks only about a CREATE the rules allow (and one it cannot
read is denied by the first validation)."""


def _refusal(place: str) -> str:
    user = Text.expr(cel.quote("request.userInfo.username"))
    template = Text.expr(cel.quote("string(e.namespace) + '/' + string(e.name)"))
    before, middle, after = TEMPLATE_REFUSED.split("{}")
    detail = Text.of(before + "user ") + user + middle + "ResourceClaimTemplate " + template + after
    return cel.bind("e", _entry(place), str(cel.error(Text.expr(_path(place)), ErrorType.FORBIDDEN) + ": " + detail))


def _slot(k: int) -> dict[str, Any]:
    allowed = (
        "authorizer.group('resource.k8s.io').resource('resourceclaimtemplates')"
        ".namespace(e.namespace).name(e.name).check('get').allowed()"
    )
    place = f"variables.foreign[{k}].split('.')"
    return {
        "expression": f"{ASKED} || size(variables.foreign) <= {k} || {cel.bind('s', place, cel.bind('e', _entry('s'), allowed))}",
        "messageExpression": f"size(variables.foreign) > {k} ? {cel.bind('s', place, _refusal('s'))} : ''",
        "message": "a template of another namespace may be used only by users who may read it",
        "reason": "Forbidden",
    }


TOO_MANY = {
    "expression": f"{ASKED} || size(variables.foreign) <= {SLOTS}",
    "messageExpression": (
        f"'{TEMPLATE}: Forbidden: names ' + string(size(variables.foreign)) + ' ResourceClaimTemplates of"
        f" other namespaces; the ValidatingAdmissionPolicy checks at most {SLOTS}'"
    ),
    "message": f"the ValidatingAdmissionPolicy checks at most {SLOTS} ResourceClaimTemplates of other namespaces",
    "reason": "Forbidden",
}

VALIDATIONS: list[dict[str, Any]] = [*(_slot(k) for k in range(SLOTS)), TOO_MANY]
