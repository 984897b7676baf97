"""UPDATE-only rules: resource sharing cannot change after creation (BEHAVIOUR.md §2.10).

Grove reports a changed list as ``Invalid: <new list as JSON>: field is immutable`` (U1 to U4) and
a changed composition of cliques or scaling groups as ``Forbidden``. The composition checks are here
because they decide which immutability errors appear: a new clique name is skipped, and a changed
scaling-group count ends the scaling-group checks early. Order: cliques, scaling groups, templates
(U1), then the PodCliqueSet list (U2).

Lists are compared as ``Semantic.DeepEqual`` does (nil equals empty, order matters), which for the
read entries is plain equality, and the new list is printed as ``json.Marshal`` prints it, ``null``
when the field was not sent (a nil slice; an explicit ``null`` prints as ``[]``, as the API server
never sends one). Templates sent as the same JSON are equal without being decoded; only changed
ones go through ``dra``.
"""

from __future__ import annotations

from typing import Any

import orjson

from webhook.core.gocompat import dra
from webhook.core.gocompat.fielderrors import ErrorList, forbidden, invalid
from webhook.core.gocompat.gotypes import GoType, semantic_equal
from webhook.core.gocompat.grovetypes import CLIQUE_SHARING, PCS_SHARING, SCALING_GROUP_SHARING
from webhook.core.model.podcliqueset import ClaimTemplates, Entries, PodCliqueSetSpec, SharingEntry
from webhook.core.pcs import details, rules



def _sent(entry: SharingEntry) -> dict[str, Any]:
    """An entry as JSON, for its Go type to decode (a type without a filter, or without a filter's
    scaling groups, ignores them)."""
    flt = entry.filter
    sent: dict[str, Any] = {"name": entry.name, "namespace": entry.namespace, "scope": entry.scope}
    if flt is not None:
        sent["filter"] = {"childCliqueNames": list(flt.clique_names), "childScalingGroupNames": list(flt.scaling_group_names)}
    return sent


def _changed(go_type: GoType, new: Entries, new_sent: bool, old: Entries) -> Any:
    """The new list as ``json.Marshal`` prints it when it differs from the old one, else ``_SAME``."""
    if new == old:
        return _SAME
    return go_type.marshal(go_type.decode([_sent(e) for e in new]) if new or new_sent else None)


_SAME = object()


def raw_templates(spec: PodCliqueSetSpec) -> ClaimTemplates | None:
    """The templates as sent; None when the list was not sent (a nil slice)."""
    return spec.templates if spec.templates or spec.templates_sent else None


def templates_text(spec: PodCliqueSetSpec) -> bytes | None:
    """The templates as JSON text (a nil list as an empty one): two lists sent as the same text are
    equal without being decoded. Templates read from their text keep it; others are written out,
    None for those nested too deep to write (a field Go ignores may nest as deep as the request
    allows): they are not known to be the same, and are decoded, which drops unknown fields and
    refuses parameters nested more than 100 levels."""
    if spec.templates.text is not None:
        return spec.templates.text
    try:
        return orjson.dumps([(t.name, t.spec) for t in spec.templates])
    except orjson.JSONEncodeError:  # nested more than the 255 levels orjson writes
        return None


def validate_update(new: PodCliqueSetSpec, old: PodCliqueSetSpec, new_text: bytes | None, old_text: bytes | None) -> ErrorList:
    """Immutability and composition errors of an UPDATE whose new object passed the create-time rules.
    ``new_text`` and ``old_text`` are the specs' ``templates_text`` (the handler has them already).

    Raises ``gotypes.DecodeError`` if a template cannot be decoded (the handler checks first).
    """
    errors = _cliques(new, old)
    errors += _scaling_groups(new, old)
    # Compared as JSON text: dict equality would miss a reordered RawExtension, which Go sees.
    if new_text is None or new_text != old_text:
        new_templates = dra.decode_templates(raw_templates(new))
        if not semantic_equal(dra.TEMPLATE_CONFIGS, new_templates, dra.decode_templates(raw_templates(old))):
            value = dra.TEMPLATE_CONFIGS.marshal(new_templates)
            errors.append(invalid(rules.TEMPLATES, value, details.IMMUTABLE))
    value = _changed(PCS_SHARING, new.entries, new.sharing_sent, old.entries)
    if value is not _SAME:
        errors.append(invalid(rules.PCS_SHARING, value, details.IMMUTABLE))
    return errors


def _cliques(new: PodCliqueSetSpec, old: PodCliqueSetSpec) -> ErrorList:
    path = rules.CLIQUES
    errors: ErrorList = []
    if len(new.cliques) != len(old.cliques):
        errors.append(forbidden(path, details.CLIQUE_COMPOSITION))
    old_by_name = {c.name: c for c in old.cliques}
    for i, clique in enumerate(new.cliques):
        previous = old_by_name.get(clique.name)
        if previous is None:
            errors.append(
                forbidden(path.child("name"), details.NEW_CLIQUE.format(clique.name))
            )
            continue
        value = _changed(CLIQUE_SHARING, clique.entries, clique.sharing_sent, previous.entries)
        if value is not _SAME:
            errors.append(invalid(path.index(i).child("resourceSharing"), value, details.IMMUTABLE))
    return errors


def _scaling_groups(new: PodCliqueSetSpec, old: PodCliqueSetSpec) -> ErrorList:
    path = rules.GROUPS
    if len(new.scaling_groups) != len(old.scaling_groups):
        return [forbidden(path, details.GROUP_COMPOSITION)]
    errors: ErrorList = []
    old_by_name = {g.name: g for g in old.scaling_groups}
    for group in new.scaling_groups:
        previous = old_by_name.get(group.name)
        if previous is None:
            errors.append(
                forbidden(path.child("name"), details.NEW_GROUP.format(group.name))
            )
            continue
        value = _changed(SCALING_GROUP_SHARING, group.entries, group.sharing_sent, previous.entries)
        if value is not _SAME:
            errors.append(invalid(path.child("resourceSharing"), value, details.IMMUTABLE))
    return errors
