"""UPDATE-only rules: resource sharing cannot change after creation (BEHAVIOUR.md §2.10).

Grove reports a changed list as ``Invalid: <new list as JSON>: field is immutable`` (U1 to U4) and
a changed composition of cliques or scaling groups as ``Forbidden``. The composition checks are here
because they decide which immutability errors appear: a new clique name is skipped, and a changed
scaling-group count ends the scaling-group checks early. Order: cliques, scaling groups, templates
(U1), then the PodCliqueSet list (U2).

Lists are compared as ``Semantic.DeepEqual`` does (nil equals empty, order matters) and the new
list is printed as ``json.Marshal`` prints it, ``null`` when the field is absent (a nil slice).
Templates sent as the same JSON are equal without being decoded; only changed ones go through ``dra``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from pydantic import BaseModel

from webhook.core.gocompat import dra
from webhook.core.gocompat.fielderrors import ErrorList, Path, forbidden, invalid
from webhook.core.gocompat.gotypes import GoType, semantic_equal
from webhook.core.gocompat.grovetypes import (
    CLIQUE_SHARING,
    PCS_SHARING,
    SCALING_GROUP_SHARING,
)
from webhook.core.model.podcliqueset import (
    PodCliqueSet,
    PodCliqueSetTemplateSpec,
    ResourceSharingSpec,
)
from webhook.core.pcs import details

TEMPLATE = Path("spec").child("template")


def _sharing(go_type: GoType, owner: BaseModel, entries: Sequence[ResourceSharingSpec]) -> list[dict[str, Any]] | None:
    """A ``resourceSharing`` list decoded into its Go type: None (nil) when the field was not sent.
    An explicit ``null`` reads as empty here (the model cannot tell them apart); the API server
    never sends one, since it prunes nulls of fields the CRD does not declare nullable."""
    if "resource_sharing" not in owner.model_fields_set and not entries:
        return None
    decoded: list[dict[str, Any]] = go_type.decode([e.model_dump(by_alias=True) for e in entries])
    return decoded


def _changed(go_type: GoType, new: BaseModel, new_entries: Sequence[ResourceSharingSpec],
             old: BaseModel, old_entries: Sequence[ResourceSharingSpec]) -> Any:
    """The new list as ``json.Marshal`` prints it when it differs from the old one, else ``_SAME``."""
    value = _sharing(go_type, new, new_entries)
    if semantic_equal(go_type, value, _sharing(go_type, old, old_entries)):
        return _SAME
    return go_type.marshal(value)


_SAME = object()


def raw_templates(template: PodCliqueSetTemplateSpec) -> list[tuple[str, dict[str, Any]]] | None:
    """(name, templateSpec) of each template as sent; None when the list was not sent (a nil slice)."""
    if "resource_claim_templates" not in template.model_fields_set and not template.resource_claim_templates:
        return None
    return [(t.name, t.template_spec) for t in template.resource_claim_templates]


def same_text(new: list[tuple[str, dict[str, Any]]] | None, old: list[tuple[str, dict[str, Any]]] | None) -> bool:
    """Whether two template lists were sent as the same JSON (a nil list as an empty one): then they
    are equal without being decoded. Templates nested too deep to write (a field Go ignores may nest
    as deep as the request allows) are not known to be the same: they are decoded, which drops
    unknown fields and refuses parameters nested more than 100 levels."""
    try:
        return orjson.dumps(new or []) == orjson.dumps(old or [])
    except orjson.JSONEncodeError:  # nested more than the 255 levels orjson writes
        return False


def validate_update(new: PodCliqueSet, old: PodCliqueSet) -> ErrorList:
    """Immutability and composition errors of an UPDATE whose new object passed the create-time rules.

    Raises ``gotypes.DecodeError`` if a template cannot be decoded (``pcs_admission`` checks first).
    """
    errors = _cliques(new, old)
    errors += _scaling_groups(new, old)
    new_raw, old_raw = raw_templates(new.spec.template), raw_templates(old.spec.template)
    # Compared as JSON text: dict equality would miss a reordered RawExtension, which Go sees.
    if not same_text(new_raw, old_raw):
        new_templates = dra.decode_templates(new_raw)
        if not semantic_equal(dra.TEMPLATE_CONFIGS, new_templates, dra.decode_templates(old_raw)):
            value = dra.TEMPLATE_CONFIGS.marshal(new_templates)
            errors.append(invalid(TEMPLATE.child("resourceClaimTemplates"), value, details.IMMUTABLE))
    new_template, old_template = new.spec.template, old.spec.template
    value = _changed(PCS_SHARING, new_template, new_template.resource_sharing, old_template, old_template.resource_sharing)
    if value is not _SAME:
        errors.append(invalid(TEMPLATE.child("resourceSharing"), value, details.IMMUTABLE))
    return errors


def _cliques(new: PodCliqueSet, old: PodCliqueSet) -> ErrorList:
    path = TEMPLATE.child("cliques")
    new_cliques, old_cliques = new.spec.template.cliques, old.spec.template.cliques
    errors: ErrorList = []
    if len(new_cliques) != len(old_cliques):
        errors.append(forbidden(path, details.CLIQUE_COMPOSITION))
    old_by_name = {c.name: c for c in old_cliques}
    for i, clique in enumerate(new_cliques):
        previous = old_by_name.get(clique.name)
        if previous is None:
            errors.append(
                forbidden(path.child("name"), details.NEW_CLIQUE.format(clique.name))
            )
            continue
        value = _changed(CLIQUE_SHARING, clique, clique.resource_sharing, previous, previous.resource_sharing)
        if value is not _SAME:
            errors.append(invalid(path.index(i).child("resourceSharing"), value, details.IMMUTABLE))
    return errors


def _scaling_groups(new: PodCliqueSet, old: PodCliqueSet) -> ErrorList:
    path = TEMPLATE.child("podCliqueScalingGroups")
    new_groups, old_groups = new.spec.template.pod_clique_scaling_groups, old.spec.template.pod_clique_scaling_groups
    if len(new_groups) != len(old_groups):
        return [forbidden(path, details.GROUP_COMPOSITION)]
    errors: ErrorList = []
    old_by_name = {g.name: g for g in old_groups}
    for group in new_groups:
        previous = old_by_name.get(group.name)
        if previous is None:
            errors.append(
                forbidden(path.child("name"), details.NEW_GROUP.format(group.name))
            )
            continue
        value = _changed(SCALING_GROUP_SHARING, group, group.resource_sharing, previous, previous.resource_sharing)
        if value is not _SAME:
            errors.append(invalid(path.child("resourceSharing"), value, details.IMMUTABLE))
    return errors
