"""What the validating webhook checks, as the policy's CEL (docs/policy.md): what it cannot decode,
then Grove's resource-sharing rules (BEHAVIOUR.md §2.5 to §2.10) in the order and texts of
``core.pcs.rules``, whose constants they are written from; then, on a CREATE that passed them, each
ResourceClaimTemplate of another namespace it names, denied unless the API server's authorizer says
the user may ``get`` it (DECISIONS.md §3.1), in the texts and choice of ``core.pcs.authorization``.

Each create-time variable holds one level's error texts, nested by owner and entry, as CEL cannot
flatten lists on every supported API server; the message joins them in Grove's order. The object
has passed Grove's CRD schema, so ``spec.template.cliques``, every entry's ``name`` and ``scope``
and every template's ``templateSpec.spec`` are there, and clique names are unique. On UPDATE a
clique is matched by name, a scaling group by the last of its name in the old list (as a Go map
built from the list keeps the last).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import PydanticKnownError

from webhook.core.gocompat.fielderrors import ErrorType, Path, not_supported
from webhook.core.gocompat.gotypes import GoType, Slice, Struct
from webhook.core.model.podcliqueset import SUPPORTED_SCOPES, PodCliqueSet
from webhook.core.pcs import rules as core
from webhook.core.pcs.authorization import TEMPLATE_REFUSED
from webhook.core.pcs.rules import CLIQUES, GROUPS, PCS_SHARING, TEMPLATE, TEMPLATES
from webhook.core.pcs.validator import PODCLIQUESET
from webhook.policy import cel
from webhook.policy.cel import Text

Variable = tuple[str, str]

SCOPES = "[" + ", ".join(cel.lit(scope) for scope in SUPPORTED_SCOPES) + "]"
SCOPE_DETAIL = not_supported(Path(), "", SUPPORTED_SCOPES).detail


def _without_metadata(templates: GoType) -> GoType:
    """``core.pcs.rules.TEMPLATES_TYPE`` less ``templateSpec.metadata``: Grove's CRD declares it an
    object without properties, so the API server prunes everything in it before any admission check
    (and the webhook, called by the API server, sees it empty too)."""
    assert isinstance(templates, Slice) and isinstance(templates.item, Struct)
    spec = templates.item.by_name["templateSpec"]
    assert isinstance(spec, Struct)
    pruned = Struct(spec.go_name, tuple(f for f in spec.fields if f.name != "metadata"))
    fields = tuple(replace(f, type=pruned) if f.name == "templateSpec" else f for f in templates.item.fields)
    return Slice(Struct(templates.item.go_name, fields))


TEMPLATES_TYPE = _without_metadata(core.TEMPLATES_TYPE)
"""The templates as the webhook decodes them, once the API server has pruned them."""

PARTS = (
    ("template", "{root}.spec.template"),
    ("templates", "{template}.?resourceClaimTemplates.orValue([])"),
    ("sharing", "{template}.?resourceSharing.orValue([])"),
    ("cliques", "{template}.cliques"),
    ("groups", "{template}.?podCliqueScalingGroups.orValue([])"),
)
OBJECT_VARIABLES: list[Variable] = [(name, part.format(root="object", template="variables.template")) for name, part in PARTS]
"""The parts of the new object the rules read, a missing list read as an empty one."""


def _entry_errors(path: Text, names: str) -> str:
    """R1 to R4 of entry ``e`` at index ``i`` of the list at ``path`` (``names``: the list's names)."""
    at = path.index("i")
    r1 = cel.error(at.child("name"), ErrorType.REQUIRED, core.REFERENCE_NAME_REQUIRED)
    r2 = cel.error(at.child("name"), ErrorType.DUPLICATE, value=cel.quote("e.name"))
    r3 = cel.error(at.child("namespace"), ErrorType.INVALID, core.NAMESPACE_OF_INTERNAL_TEMPLATE, cel.quote("e.namespace"))
    r4 = cel.error(at.child("scope"), ErrorType.NOT_SUPPORTED, SCOPE_DETAIL, cel.quote("e.scope"))
    internal = "e.?namespace.orValue('') != '' && e.name != '' && e.name in variables.templateNames"
    earlier = cel.bind("n", "e.name", f"{names}.transformList(j, m, m == n, j)[0] < i")
    return (
        f"(e.name == '' ? [{r1}] : {cel.when(earlier, f'[{r2}]')})"
        f" + {cel.when(internal, f'[{r3}]')} + {cel.when(f'!(e.scope in {SCOPES})', f'[{r4}]')}"
    )


def _sharing_errors(entries: str, path: Text, names: str, empty: str = "", children: tuple[tuple[str, str], ...] = ()) -> str:
    """R1 to R4 over the list ``entries`` at ``path`` (``names``: the list's names); then, where the
    level has filters, F1 to F3 (G1, G2) for each entry with one: ``empty`` when it names no child,
    and each name of its ``children`` lists (member, the names there) that is not there."""
    errors = f"{entries}.transformList(i, e, {_entry_errors(path, names)})"
    if not children:
        return errors
    at = path.index("i").child("filter")
    lists = [(f"e.filter.?{member}.orValue([])", known, at.child(member).index("j")) for member, known in children]
    unnamed = cel.when(" && ".join(f"size({items}) == 0" for items, _, _ in lists), f"[{cel.error(at, ErrorType.REQUIRED, empty)}]")
    unknown = [f"{items}.transformList(j, n, !(n in {known}), {cel.error(name, ErrorType.NOT_FOUND, value=cel.quote('n'))})" for items, known, name in lists]
    return f"{errors} + {entries}.transformList(i, e, {cel.when('has(e.filter)', ' + '.join([unnamed, *unknown]))})"


def _owned_errors(owners: str, path: Path, index: str, owner: str, empty: str = "", children: tuple[tuple[str, str], ...] = ()) -> str:
    """``_sharing_errors`` over the list of each of ``owners`` (``cliques``, ``groups``), as ``owner`` at ``index``."""
    names = f"variables.{owners[:-1]}SharingNames[{index}]"
    entries = _sharing_errors(f"{owner}.?resourceSharing.orValue([])", Text.of(path).index(index).child("resourceSharing"), names, empty, children)
    return f"variables.{owners}.transformList({index}, {owner}, {entries})"


def _templates() -> str:
    at = Text.of(TEMPLATES).index("i")
    t1 = cel.error(at.child("name"), ErrorType.REQUIRED, core.TEMPLATE_NAME_REQUIRED)
    t2 = cel.error(at.child("templateSpec.spec.devices.requests"), ErrorType.REQUIRED, core.DEVICE_REQUESTS_REQUIRED)
    names = "'[' + variables.duplicateTemplateNames.map(n, strings.quote(n)).join(',') + ']'"
    t3 = cel.error(Text.of(TEMPLATES.child("name")), ErrorType.DUPLICATE, value=names)
    no_requests = "size(t.templateSpec.spec.?devices.?requests.orValue([])) == 0"
    unnamed = "t.name == ''"
    each = f"{cel.when(unnamed, f'[{t1}]')} + {cel.when(no_requests, f'[{t2}]')}"
    return f"variables.templates.transformList(i, t, {each}) + {cel.when('size(variables.duplicateTemplateNames) > 0', f'[[{t3}]]')}"


ERROR_LEVELS = (("templateErrors", 2), ("sharingErrors", 2), ("cliqueErrors", 3), ("groupErrors", 3))
"""The variables holding the create-time errors, in Grove's order, and how deep each is nested."""

VARIABLES: list[Variable] = [
    ("templateNames", "variables.templates.map(t, t.name)"),
    ("duplicateTemplateNames",
     "variables.templateNames.transformList(i, n, [variables.templateNames.transformList(j, m, m == n, j)]"
     ".map(at, at[0] == i && size(at) > 1)[0], n)"),
    ("cliqueNames", "variables.cliques.transformMapEntry(i, q, {q.name: true})"),
    ("groupNames", "variables.groups.map(p, p.name)"),
    ("sharingNames", "variables.sharing.map(e, e.name)"),
    *((f"{owners[:-1]}SharingNames", f"variables.{owners}.map(o, o.?resourceSharing.orValue([]).map(e, e.name))") for owners in ("cliques", "groups")),
    ("templateErrors", _templates()),
    ("sharingErrors", _sharing_errors("variables.sharing", Text.of(PCS_SHARING), "variables.sharingNames", core.PCS_FILTER_EMPTY,
                                      (("childCliqueNames", "variables.cliqueNames"), ("childScalingGroupNames", "variables.groupNames")))),
    ("cliqueErrors", _owned_errors("cliques", CLIQUES, "c", "q")),
    ("groupErrors", _owned_errors("groups", GROUPS, "g", "p", core.GROUP_FILTER_EMPTY, (("childCliqueNames", "p.cliqueNames"),))),
    ("createErrorCount", " + ".join(cel.counted(f"variables.{name}", depth) for name, depth in ERROR_LEVELS)),
]
"""The create-time rules: ``createErrorCount`` is 0 exactly when the webhook's rules find nothing."""

MESSAGE = "[" + ", ".join(cel.joined(f"variables.{name}", depth) for name, depth in ERROR_LEVELS) + "].filter(s, s != '').join(', ')"
"""Every create-time error, in Grove's order, joined as Grove's aggregate joins them."""

OLD_VARIABLES: list[Variable] = [
    *((f"old{name.title()}", part.format(root="oldObject", template="variables.oldTemplate")) for name, part in PARTS),
    ("oldCliqueIndex", "variables.oldCliques.transformMapEntry(i, q, {q.name: i})"),
    ("oldGroupNames", "variables.oldGroups.map(p, p.name)"),
]
"""The parts of ``oldObject`` the UPDATE rules compare; read only on UPDATE (there is none on CREATE)."""


def same(go_type: GoType, new: str, old: str) -> str:
    """Whether two present lists are equal as Go compares them: equal JSON first, then Go's way."""
    return f"({new} == {old} || {cel.equal(go_type, new, old)})"


def _immutable(path: Text, go_type: GoType, owner: str) -> Text:
    """The owner's list changed: printed as ``json.Marshal`` prints it, ``null`` when it was not sent."""
    printed = f"(has({owner}.resourceSharing) ? {cel.marshal(go_type, f'{owner}.resourceSharing')} : 'null')"
    return cel.error(path, ErrorType.INVALID, core.IMMUTABLE, printed)


def _owners(owners: str, o: str, old: str, path: Text, go_type: GoType, new_name: tuple[Path, str]) -> str:
    """Each owner of ``owners`` (as ``o``) that is new (``new_name``: path and text), or whose list
    is not its ``old`` one's, as an error."""
    known = f"{o}.name in variables.{'oldCliqueIndex' if o == 'q' else 'oldGroupNames'}"
    changed = cel.bind("o", old, same(go_type, f"{o}.?resourceSharing.orValue([])", "o.?resourceSharing.orValue([])"))
    before, after = new_name[1].split("{}")
    new = cel.error(Text.of(new_name[0]), ErrorType.FORBIDDEN, before) + Text.expr(f"string({o}.name)") + after
    return f"{owners}.transformList(i, {o}, !({known}) || !{changed}, {known} ? {_immutable(path, go_type, o)} : {new})"


def _update_errors() -> str:
    """Composition and immutability errors in Grove's order: cliques, scaling groups, templates (U1),
    the PodCliqueSet's list (U2)."""
    cliques = _owners("variables.cliques", "q", "variables.oldCliques[variables.oldCliqueIndex[q.name]]",
                      Text.of(CLIQUES).index("i").child("resourceSharing"), core.CLIQUE_SHARING_TYPE, (CLIQUES.child("name"), core.NEW_CLIQUE))
    groups = _owners("variables.groups", "p", "variables.oldGroups[variables.oldGroups.transformList(j, o, o.name == p.name, j).max()]",
                     Text.of(GROUPS.child("resourceSharing")), core.GROUP_SHARING_TYPE, (GROUPS.child("name"), core.NEW_GROUP))
    clique_composition = cel.error(Text.of(CLIQUES), ErrorType.FORBIDDEN, core.CLIQUE_COMPOSITION)
    group_composition = cel.error(Text.of(GROUPS), ErrorType.FORBIDDEN, core.GROUP_COMPOSITION)
    templates = cel.error(Text.of(TEMPLATES), ErrorType.INVALID, core.IMMUTABLE)
    sharing = _immutable(Text.of(PCS_SHARING), core.PCS_SHARING_TYPE, "variables.template")
    same_templates = same(TEMPLATES_TYPE, "variables.templates", "variables.oldTemplates")
    same_sharing = same(core.PCS_SHARING_TYPE, "variables.sharing", "variables.oldSharing")
    return (
        f"{cel.when('size(variables.cliques) != size(variables.oldCliques)', f'[{clique_composition}]')} + {cliques}"
        f" + (size(variables.groups) != size(variables.oldGroups) ? [{group_composition}] : {groups})"
        f" + {cel.when(f'!{same_templates}', f'[{templates}]')} + {cel.when(f'!{same_sharing}', f'[{sharing}]')}"
    )


UPDATE_ERRORS = _update_errors()
"""Only read once the new object passed the create-time rules. Not a variable: the type check the
controller manager runs compiles every variable again for each expression of the policy, and this
is needed by one validation only."""

UPDATE_MESSAGE = cel.bind(
    "e",
    UPDATE_ERRORS,
    cel.bind("u", "e.transformList(i, m, !e.exists(j, n, j < i && n == m), m)", "size(u) > 1 ? '[' + u.join(', ') + ']' : u.join(', ')"),
)
"""The errors joined as Grove's aggregate joins them: each text once, in brackets when several."""


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


def _first(*checks: tuple[str, str, str]) -> str:
    """The refusal of the first (condition, field, problems) whose problems are not ``''``."""
    if not checks:
        return "''"
    (condition, field, problems), rest = checks[0], _first(*checks[1:])
    refusal = Text.of(f"cannot decode request.{field} as {PODCLIQUESET}: ") + Text.expr("p")
    found = cel.bind("p", problems, f"p != '' ? {refusal} : {rest}")
    return found if condition == "true" else f"({condition} ? {found} : {rest})"


UPDATE = "request.operation == 'UPDATE'"

REFUSAL = _first(
    ("true", "object", model_problems("object")),
    (UPDATE, "oldObject", model_problems("oldObject")),
    ("true", "object", cel.problems(TEMPLATES_TYPE, "variables.templates", Text.of(TEMPLATES))),
    (f"{UPDATE} && variables.templates != variables.oldTemplates", "oldObject", cel.problems(TEMPLATES_TYPE, "variables.oldTemplates", Text.of(TEMPLATES))),
)
"""Why the webhook would answer code 400, or ``''``. Past Grove's CRD schema, two things still stop
it reading a PodCliqueSet: an int32 of its model out of range (an API server before 1.35 does not
check ``format: int32``) and a capacity that is no quantity. (Opaque parameters nested deeper than
the webhook reads, which it refuses too, are read as Go reads them: ``cel``.) In the webhook's
order: the new object's model, on UPDATE the old one's, then the new templates and, on UPDATE when
they differ, the old ones (decoded only to compare). Not a variable, as ``UPDATE_ERRORS``."""

SLOTS = 16
"""Templates of other namespaces one CREATE may name, within the request's budget: a message cannot
ask the authorizer, so each template gets a validation (a slot) whose message names it, and each
answer costs a large share of a request's CEL budget, so the slots are few (docs/policy.md)."""

FOREIGN = "e.?namespace.orValue('') != '' && e.namespace != request.namespace"
OWNERS = (("c", "variables.cliques", CLIQUES), ("g", "variables.groups", GROUPS))
"""The owners of lists after the PodCliqueSet's (``p``), in the rules' order: cliques, scaling groups."""


def _places() -> str:
    """Each entry naming a template of another namespace, by its place ``<level>.<owner>.<entry>``:
    entries of all levels are gathered into one list, as CEL cannot flatten lists on every
    supported API server, and places are digits and letters, so joining and splitting are exact."""
    pcs = f"variables.sharing.transformList(i, e, {FOREIGN}, 'p.0.' + string(i)).join(',')"
    owned = [
        f"{owners}.transformList(o, w, w.?resourceSharing.orValue([]).transformList(i, e, {FOREIGN},"
        f" '{level}.' + string(o) + '.' + string(i)).join(',')).filter(s, s != '').join(',')"
        for level, owners, _ in OWNERS
    ]
    return f"[{pcs}, {', '.join(owned)}].filter(s, s != '').join(',')"


def _by_level(place: str, pcs: object, cliques: object, groups: object) -> str:
    return f"({place}[0] == 'p' ? {pcs} : ({place}[0] == 'c' ? {cliques} : {groups}))"


def _at(place: str, body: str) -> str:
    """``body`` with ``s`` the three parts of ``place`` and ``e`` the entry there."""
    owned = (f"{owners}[int(s[1])].resourceSharing[int(s[2])]" for _, owners, _ in OWNERS)
    return cel.bind("s", f"{place}.split('.')", cel.bind("e", _by_level("s", "variables.sharing[int(s[2])]", *owned), body))


def _template_refusal() -> str:
    """The webhook's refusal of entry ``e`` at ``s``, at its ``namespace`` field path (e.g.
    ``spec.template.cliques[0].resourceSharing[1].namespace``)."""
    entry = Text.expr("s[2]")
    owned = (Text.of(f"{path}[") + Text.expr("s[1]") + "].resourceSharing[" + entry + "].namespace" for _, _, path in OWNERS)
    path = _by_level("s", Text.of(f"{PCS_SHARING}[") + entry + "].namespace", *owned)
    before, middle, after = TEMPLATE_REFUSED.split("{}")
    user, template = Text.expr(cel.quote("request.userInfo.username")), Text.expr(cel.quote("string(e.namespace) + '/' + string(e.name)"))
    detail = Text.of(before + "user ") + user + middle + "ResourceClaimTemplate " + template + after
    return str(cel.error(Text.expr(path), ErrorType.FORBIDDEN) + ": " + detail)


KEY = "strings.quote(e.namespace) + strings.quote(e.name)"
"""A template's namespace and name as one text, the same for the same pair and only for it."""

FOREIGN_VARIABLES: list[Variable] = [
    ("foreignPlaces", _places()),
    ("foreignEntries", "variables.foreignPlaces == '' ? [] : variables.foreignPlaces.split(',')"),
    ("foreignKeys", f"variables.foreignEntries.map(f, {_at('f', KEY)})"),
    ("foreign", "variables.foreignEntries.transformList(i, f, !variables.foreignKeys.exists(j, k, j < i && k == variables.foreignKeys[i]), f)"),
]
"""``foreign``: the place of the first entry naming each template of another namespace."""

ASKED = "request.operation != 'CREATE' || variables.createErrorCount > 0"
"""When nothing is asked: the webhook asks only about a CREATE the rules allow (and one it cannot
read is denied by the first validation)."""


def validation(expression: str, message_expression: str, message: str, reason: str = "Forbidden") -> dict[str, str]:
    """One of the policy's validations: it denies when ``expression`` is false, with the text
    ``message_expression`` evaluates to (``message`` when that fails or is empty) and ``reason``."""
    return {"expression": expression, "messageExpression": message_expression, "message": message, "reason": reason}


def _slot(k: int) -> dict[str, str]:
    allowed = (
        "authorizer.group('resource.k8s.io').resource('resourceclaimtemplates')"
        ".namespace(e.namespace).name(e.name).check('get').allowed()"
    )
    return validation(
        f"{ASKED} || size(variables.foreign) <= {k} || {_at(f'variables.foreign[{k}]', allowed)}",
        f"size(variables.foreign) > {k} ? {_at(f'variables.foreign[{k}]', _template_refusal())} : ''",
        "a template of another namespace may be used only by users who may read it",
    )


TOO_MANY = validation(
    f"{ASKED} || size(variables.foreign) <= {SLOTS}",
    f"'{TEMPLATE}: Forbidden: names ' + string(size(variables.foreign)) + ' ResourceClaimTemplates of"
    f" other namespaces; the ValidatingAdmissionPolicy checks at most {SLOTS}'",
    f"the ValidatingAdmissionPolicy checks at most {SLOTS} ResourceClaimTemplates of other namespaces",
)

TEMPLATE_VALIDATIONS = [*(_slot(k) for k in range(SLOTS)), TOO_MANY]
