"""Grove's create-time resource-sharing rules (BEHAVIOUR.md §2.5 to §2.8) as the policy's CEL.

The same rules, order and texts as ``core.pcs.rules``: templates (T1, T2 per template, then T3),
the PodCliqueSet's list (R1 to R4 per entry, then F1 to F3 per filter), each clique's list (R1 to
R4), each scaling group's (R1 to R4, then G1 and G2). Each variable holds the error texts of one
level, nested by owner and entry as CEL cannot flatten lists on every supported API server; the
validation counts them and its message joins them in that order, as Grove aggregates its errors.

The object is the one the API server has checked against Grove's CRD: ``spec.template.cliques``,
every entry's ``name`` and ``scope``, every template's ``templateSpec.spec`` are there, and clique
names are unique (a list map).
"""

from __future__ import annotations

from webhook.core.gocompat.fielderrors import ErrorType, Path, not_supported
from webhook.core.model.podcliqueset import SUPPORTED_SCOPES
from webhook.core.pcs import rules as details
from webhook.core.pcs.rules import CLIQUES, GROUPS, TEMPLATE
from webhook.policy import cel
from webhook.policy.cel import Text

Variable = tuple[str, str]

SCOPES = "[" + ", ".join(cel.lit(scope) for scope in SUPPORTED_SCOPES) + "]"
SCOPE_DETAIL = not_supported(Path(), "", SUPPORTED_SCOPES).detail
TEMPLATES = TEMPLATE.child("resourceClaimTemplates")
SHARING = TEMPLATE.child("resourceSharing")

OBJECT_VARIABLES: list[Variable] = [
    ("template", "object.spec.template"),
    ("templates", "variables.template.?resourceClaimTemplates.orValue([])"),
    ("sharing", "variables.template.?resourceSharing.orValue([])"),
    ("cliques", "variables.template.cliques"),
    ("groups", "variables.template.?podCliqueScalingGroups.orValue([])"),
]
"""The parts of the new object the rules read, a missing list read as an empty one."""


def _path(path: Path) -> Text:
    return Text.of(str(path))


def _entry_errors(path: Text, i: str, e: str, names: str) -> str:
    """R1 to R4 of entry ``e`` at index ``i`` of the list at ``path`` (``names``: the list's names)."""
    at = path.index(i)
    r1 = cel.error(at.child("name"), ErrorType.REQUIRED, details.REFERENCE_NAME_REQUIRED)
    r2 = cel.error(at.child("name"), ErrorType.DUPLICATE, value=cel.quote(f"{e}.name"))
    r3 = cel.error(at.child("namespace"), ErrorType.INVALID, details.NAMESPACE_OF_INTERNAL_TEMPLATE, cel.quote(f"{e}.namespace"))
    r4 = cel.error(at.child("scope"), ErrorType.NOT_SUPPORTED, SCOPE_DETAIL, cel.quote(f"{e}.scope"))
    internal = f"{e}.?namespace.orValue('') != '' && {e}.name != '' && {e}.name in variables.templateNames"
    return (
        f"({e}.name == '' ? [{r1}] : {cel.when(_earlier(names, f'{e}.name', i), f'[{r2}]')})"
        f" + {cel.when(internal, f'[{r3}]')} + {cel.when(f'!({e}.scope in {SCOPES})', f'[{r4}]')}"
    )


def _earlier(names: str, name: str, i: str) -> str:
    """Whether ``name`` (the ``i``-th of ``names``) is also at a lower index: one pass over the list."""
    return cel.bind("n", name, f"{names}.transformList(j, m, m == n, j)[0] < {i}")


def _name_lists(owners: str) -> str:
    return f"variables.{owners}.map(o, o.?resourceSharing.orValue([]).map(e, e.name))"


def _templates() -> str:
    t1 = cel.error(_path(TEMPLATES).index("i").child("name"), ErrorType.REQUIRED, details.TEMPLATE_NAME_REQUIRED)
    requests = _path(TEMPLATES).index("i").child("templateSpec").child("spec").child("devices").child("requests")
    t2 = cel.error(requests, ErrorType.REQUIRED, details.DEVICE_REQUESTS_REQUIRED)
    names = "'[' + variables.duplicateTemplateNames.map(n, strings.quote(n)).join(',') + ']'"
    t3 = cel.error(_path(TEMPLATES.child("name")), ErrorType.DUPLICATE, value=names)
    no_requests = "size(t.templateSpec.spec.?devices.?requests.orValue([])) == 0"
    unnamed = "t.name == ''"
    each = f"{cel.when(unnamed, f'[{t1}]')} + {cel.when(no_requests, f'[{t2}]')}"
    return f"variables.templates.transformList(i, t, {each}) + {cel.when('size(variables.duplicateTemplateNames) > 0', f'[[{t3}]]')}"


def _sharing() -> str:
    """R1 to R4 over the PodCliqueSet's list, then F1 to F3 for each entry with a filter."""
    at = _path(SHARING).index("i").child("filter")
    f1 = cel.error(at, ErrorType.REQUIRED, details.PCS_FILTER_EMPTY)
    cliques, groups = "e.filter.?childCliqueNames.orValue([])", "e.filter.?childScalingGroupNames.orValue([])"
    f2 = cel.error(at.child("childCliqueNames").index("j"), ErrorType.NOT_FOUND, value=cel.quote("n"))
    f3 = cel.error(at.child("childScalingGroupNames").index("j"), ErrorType.NOT_FOUND, value=cel.quote("n"))
    filtered = (
        f"{cel.when(f'size({cliques}) == 0 && size({groups}) == 0', f'[{f1}]')}"
        f" + {cliques}.transformList(j, n, !(n in variables.cliqueNames), {f2})"
        f" + {groups}.transformList(j, n, !(n in variables.groupNames), {f3})"
    )
    entries = _entry_errors(_path(SHARING), "i", "e", "variables.sharingNames")
    return f"variables.sharing.transformList(i, e, {entries}) + variables.sharing.transformList(i, e, {cel.when('has(e.filter)', filtered)})"


def _cliques() -> str:
    entries = _entry_errors(_path(CLIQUES).index("c").child("resourceSharing"), "i", "e", "variables.cliqueSharingNames[c]")
    return f"variables.cliques.transformList(c, q, q.?resourceSharing.orValue([]).transformList(i, e, {entries}))"


def _groups() -> str:
    """R1 to R4 over each scaling group's list, then G1 and G2 for each entry with a filter."""
    path = _path(GROUPS).index("g").child("resourceSharing")
    at = path.index("i").child("filter")
    g1 = cel.error(at, ErrorType.REQUIRED, details.GROUP_FILTER_EMPTY)
    g2 = cel.error(at.child("childCliqueNames").index("j"), ErrorType.NOT_FOUND, value=cel.quote("n"))
    cliques = "e.filter.?childCliqueNames.orValue([])"
    filtered = f"{cel.when(f'size({cliques}) == 0', f'[{g1}]')} + {cliques}.transformList(j, n, !(n in p.cliqueNames), {g2})"
    entries = _entry_errors(path, "i", "e", "variables.groupSharingNames[g]")
    per_group = (
        f"p.?resourceSharing.orValue([]).transformList(i, e, {entries})"
        f" + p.?resourceSharing.orValue([]).transformList(i, e, {cel.when('has(e.filter)', filtered)})"
    )
    return f"variables.groups.transformList(g, p, {per_group})"


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
    ("cliqueSharingNames", _name_lists("cliques")),
    ("groupSharingNames", _name_lists("groups")),
    ("templateErrors", _templates()),
    ("sharingErrors", _sharing()),
    ("cliqueErrors", _cliques()),
    ("groupErrors", _groups()),
    ("createErrorCount", " + ".join(cel.counted(f"variables.{name}", depth) for name, depth in ERROR_LEVELS)),
]
"""The create-time rules: ``createErrorCount`` is 0 exactly when the webhook's rules find nothing."""

MESSAGE = (
    "[" + ", ".join(cel.joined(f"variables.{name}", depth) for name, depth in ERROR_LEVELS) + "].filter(s, s != '').join(', ')"
)
"""Every create-time error, in Grove's order, joined as Grove's aggregate joins them."""
