"""The UPDATE-only rules (BEHAVIOUR.md §2.10) as the policy's CEL, with ``oldObject``: the same
composition checks, immutability rules, order and texts as ``core.pcs.rules.validate_update``.

Lists are compared as Go compares them once decoded (``gotypes.equal``, generated from the Go types
the webhook decodes into); lists equal as JSON skip that comparison. A changed sharing list is
printed as ``json.Marshal`` prints it; changed templates are reported without their value, as
apimachinery renders an omitted one, since CEL cannot print quantities canonically nor sort a
map's keys. A clique is matched by name (names are unique), a scaling group by the last of its
name in the old list (as a Go map built from the list keeps the last).
"""

from __future__ import annotations

from webhook.core.gocompat.fielderrors import ErrorType
from webhook.core.gocompat.gotypes import GoType
from webhook.core.pcs import rules as details
from webhook.core.pcs.rules import CLIQUE_SHARING_TYPE as CLIQUE_SHARING
from webhook.core.pcs.rules import CLIQUES, GROUPS, TEMPLATE
from webhook.core.pcs.rules import GROUP_SHARING_TYPE as SCALING_GROUP_SHARING
from webhook.core.pcs.rules import PCS_SHARING_TYPE as PCS_SHARING
from webhook.policy import cel, gotypes
from webhook.policy.cel import Text
from webhook.policy.decoding import TEMPLATE_CONFIGS
from webhook.policy.rules import TEMPLATES, Variable

OLD_VARIABLES: list[Variable] = [
    ("oldTemplate", "oldObject.spec.template"),
    ("oldTemplates", "variables.oldTemplate.?resourceClaimTemplates.orValue([])"),
    ("oldSharing", "variables.oldTemplate.?resourceSharing.orValue([])"),
    ("oldCliques", "variables.oldTemplate.cliques"),
    ("oldGroups", "variables.oldTemplate.?podCliqueScalingGroups.orValue([])"),
    ("oldCliqueIndex", "variables.oldCliques.transformMapEntry(i, q, {q.name: i})"),
    ("oldGroupNames", "variables.oldGroups.map(p, p.name)"),
]
"""The parts of ``oldObject`` the rules compare; read only on UPDATE (there is none on CREATE)."""


def same(go_type: GoType, new: str, old: str) -> str:
    """Whether two present lists are equal as Go compares them: equal JSON first, then Go's way."""
    return f"({new} == {old} || {gotypes.equal(go_type, new, old)})"


def _same_sharing(go_type: GoType, new_owner: str, old_owner: str) -> str:
    return same(go_type, f"{new_owner}.?resourceSharing.orValue([])", f"{old_owner}.?resourceSharing.orValue([])")


def _printed(go_type: GoType, owner: str) -> str:
    """The owner's list as ``json.Marshal`` prints it: ``null`` when it was not sent."""
    return f"(has({owner}.resourceSharing) ? {gotypes.marshal(go_type, f'{owner}.resourceSharing')} : 'null')"


def _immutable(path: Text, go_type: GoType, owner: str) -> Text:
    return cel.error(path, ErrorType.INVALID, details.IMMUTABLE, _printed(go_type, owner))


def _new_name(path: Text, detail: str, name: str) -> Text:
    before, after = detail.split("{}")
    return cel.error(path, ErrorType.FORBIDDEN, before) + Text.expr(f"string({name})") + after


def _cliques() -> str:
    composition = cel.error(Text.of(str(CLIQUES)), ErrorType.FORBIDDEN, details.CLIQUE_COMPOSITION)
    new_name = _new_name(Text.of(str(CLIQUES.child("name"))), details.NEW_CLIQUE, "q.name")
    changed = _immutable(Text.of(str(CLIQUES)).index("i").child("resourceSharing"), CLIQUE_SHARING, "q")
    old = "variables.oldCliques[variables.oldCliqueIndex[q.name]]"
    known = "q.name in variables.oldCliqueIndex"
    reported = f"!({known}) || !{cel.bind('o', old, _same_sharing(CLIQUE_SHARING, 'q', 'o'))}"
    return (
        f"{cel.when('size(variables.cliques) != size(variables.oldCliques)', f'[{composition}]')}"
        f" + variables.cliques.transformList(i, q, {reported}, {known} ? {changed} : {new_name})"
    )


def _groups() -> str:
    composition = cel.error(Text.of(str(GROUPS)), ErrorType.FORBIDDEN, details.GROUP_COMPOSITION)
    new_name = _new_name(Text.of(str(GROUPS.child("name"))), details.NEW_GROUP, "p.name")
    changed = _immutable(Text.of(str(GROUPS.child("resourceSharing"))), SCALING_GROUP_SHARING, "p")
    old = "variables.oldGroups[variables.oldGroups.transformList(j, o, o.name == p.name, j).max()]"
    known = "p.name in variables.oldGroupNames"
    reported = f"!({known}) || !{cel.bind('o', old, _same_sharing(SCALING_GROUP_SHARING, 'p', 'o'))}"
    each = f"variables.groups.transformList(i, p, {reported}, {known} ? {changed} : {new_name})"
    return f"(size(variables.groups) != size(variables.oldGroups) ? [{composition}] : {each})"


def _templates() -> str:
    changed = cel.error(Text.of(str(TEMPLATES)), ErrorType.INVALID, details.IMMUTABLE)
    return cel.when(f"!{same(TEMPLATE_CONFIGS, 'variables.templates', 'variables.oldTemplates')}", f"[{changed}]")


def _sharing() -> str:
    changed = _immutable(Text.of(str(TEMPLATE.child("resourceSharing"))), PCS_SHARING, "variables.template")
    return cel.when(f"!{same(PCS_SHARING, 'variables.sharing', 'variables.oldSharing')}", f"[{changed}]")


ERRORS = f"{_cliques()} + {_groups()} + {_templates()} + {_sharing()}"
"""Composition and immutability errors in Grove's order: cliques, scaling groups, templates (U1),
the PodCliqueSet's list (U2). Only read once the new object passed the create-time rules. Not a
variable, for the reason ``decoding.REFUSAL`` is not."""

MESSAGE = cel.bind(
    "e",
    ERRORS,
    cel.bind(
        "u",
        "e.transformList(i, m, !e.exists(j, n, j < i && n == m), m)",
        "size(u) > 1 ? '[' + u.join(', ') + ']' : u.join(', ')",
    ),
)
"""The errors joined as Grove's aggregate joins them: each text once, in brackets when several."""
