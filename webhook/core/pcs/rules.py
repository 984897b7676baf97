"""Grove's create-time resource-sharing rules (BEHAVIOUR.md §2.5 to §2.8), in Grove's order.

``validate_create`` mirrors the part of Grove's ``validate()`` that concerns resource sharing: templates
(T1 to T3), the PodCliqueSet list (R1 to R4, then F1 to F3), each clique's list (R1 to R4), each
scaling group's list (R1 to R4, then G1 and G2). The same entry checks run at every level.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from webhook.core.gocompat.fielderrors import (
    ErrorList,
    GoString,
    Path,
    duplicate,
    invalid,
    not_found,
    not_supported,
    required,
)
from webhook.core.model.podcliqueset import (
    SUPPORTED_SCOPES,
    ClaimTemplates,
    PodCliqueSetSpec,
    ScalingGroupConfig,
    SharingEntry,
)
from webhook.core.pcs import details

TEMPLATE = Path("spec").child("template")
CLIQUES = TEMPLATE.child("cliques")
GROUPS = TEMPLATE.child("podCliqueScalingGroups")
TEMPLATES = TEMPLATE.child("resourceClaimTemplates")
PCS_SHARING = TEMPLATE.child("resourceSharing")


def validate_create(spec: PodCliqueSetSpec) -> ErrorList:
    """Every resource-sharing error of one PodCliqueSet, in the order Grove reports them."""
    internal = set(spec.templates.names)
    errors = _templates(TEMPLATES, spec.templates)

    errors += _entries(PCS_SHARING, spec.entries, internal)
    clique_names = {c.name for c in spec.cliques}
    group_names = {g.name for g in spec.scaling_groups}
    for i, entry in enumerate(spec.entries):
        if entry.filter is not None:
            errors += _pcs_filter(PCS_SHARING, i, entry, clique_names, group_names)

    for c, clique in enumerate(spec.cliques):
        if clique.entries:
            errors += _entries(_sharing_path(CLIQUES, c), clique.entries, internal)

    for g, group in enumerate(spec.scaling_groups):
        if group.entries:
            errors += _group(_sharing_path(GROUPS, g), group, internal)
    return errors


@functools.lru_cache(maxsize=256)
def _sharing_path(templates: Path, i: int) -> Path:
    """The ``resourceSharing`` list of the ``i``-th clique or scaling group, made once for every spec."""
    return templates.index(i).child("resourceSharing")


def _templates(path: Path, templates: ClaimTemplates) -> ErrorList:
    names, requests = templates.names, templates.requests
    if "" not in names and 0 not in requests and len(set(names)) == len(names):
        return []  # the usual list, told without walking it
    errors: ErrorList = []
    counts: dict[str, int] = {}
    for i, name in enumerate(names):
        if name == "":
            errors.append(required(path.index(i).child("name"), details.TEMPLATE_NAME_REQUIRED))
        if requests[i] == 0:
            errors.append(
                required(
                    path.index(i).child("templateSpec", "spec", "devices", "requests"),
                    details.DEVICE_REQUESTS_REQUIRED,
                )
            )
        counts[name] = counts.get(name, 0) + 1
    duplicated = [name for name, count in counts.items() if count > 1]
    if duplicated:
        errors.append(duplicate(path.child("name"), duplicated))
    return errors


def _entries(path: Path, entries: Sequence[SharingEntry], internal: set[str]) -> ErrorList:
    """R1 to R4 for one list: the checks every level shares."""
    errors: ErrorList = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if entry.name == "":
            errors.append(required(path.index(i).child("name"), details.REFERENCE_NAME_REQUIRED))
        elif entry.name in seen:
            errors.append(duplicate(path.index(i).child("name"), GoString(entry.name)))
        seen.add(entry.name)
        if entry.namespace and entry.name and entry.name in internal:
            errors.append(
                invalid(
                    path.index(i).child("namespace"),
                    GoString(entry.namespace),
                    details.NAMESPACE_OF_INTERNAL_TEMPLATE,
                )
            )
        if entry.scope not in SUPPORTED_SCOPES:
            errors.append(not_supported(path.index(i).child("scope"), entry.scope, SUPPORTED_SCOPES))
    return errors


def _pcs_filter(list_path: Path, i: int, entry: SharingEntry, clique_names: set[str], group_names: set[str]) -> ErrorList:
    """F1 to F3: a PodCliqueSet filter names at least one child, and only children that exist
    (the usual filter, answered before any path is made)."""
    flt = entry.filter
    if flt is None or flt.names_only(clique_names, group_names):
        return []
    path = list_path.index(i).child("filter")
    errors: ErrorList = []
    if not flt.clique_names and not flt.scaling_group_names:
        errors.append(required(path, details.PCS_FILTER_EMPTY))
    for j, name in enumerate(flt.clique_names):
        if name not in clique_names:
            errors.append(not_found(path.child("childCliqueNames").index(j), GoString(name)))
    for j, name in enumerate(flt.scaling_group_names):
        if name not in group_names:
            errors.append(not_found(path.child("childScalingGroupNames").index(j), GoString(name)))
    return errors


def _group(path: Path, group: ScalingGroupConfig, internal: set[str]) -> ErrorList:
    """R1 to R4 for a scaling group's list, then G1 and G2 for each filtered entry."""
    errors = _entries(path, group.entries, internal)
    members = set(group.clique_names)
    for i, entry in enumerate(group.entries):
        if entry.filter is not None:
            errors += _group_filter(path, i, entry, members)
    return errors


def _group_filter(list_path: Path, i: int, entry: SharingEntry, members: set[str]) -> ErrorList:
    """G1 and G2: a scaling group's filter names at least one clique, and only its members."""
    flt = entry.filter
    if flt is None or flt.names_only(members, frozenset()):
        return []
    path = list_path.index(i).child("filter")
    errors: ErrorList = []
    if not flt.clique_names:
        errors.append(required(path, details.GROUP_FILTER_EMPTY))
    for j, name in enumerate(flt.clique_names):
        if name not in members:
            errors.append(not_found(path.child("childCliqueNames").index(j), GoString(name)))
    return errors
