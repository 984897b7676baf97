"""Grove's resource-sharing rules (BEHAVIOUR.md §2.5 to §2.10) as Grove's ``pcs/validation`` writes
them, in its order. Every text is a constant here, shared with the ValidatingAdmissionPolicy made
from these rules (``webhook.policy``), so that the two cannot drift apart in wording."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from webhook.core.gocompat import dra, rawjson
from webhook.core.gocompat.fielderrors import (
    FieldError, GoString, Path, duplicate, forbidden, invalid, not_found, not_supported, required,
)
from webhook.core.gocompat.gotypes import GoType, Slice, of_model, semantic_equal
from webhook.core.model.podcliqueset import (
    SUPPORTED_SCOPES, Entries, PCSGResourceSharingSpec, PCSResourceSharingSpec, PodCliqueScalingGroupConfig,
    PodCliqueSetSpec, ResourceClaimTemplateConfig, ResourceSharingSpec,
)

TEMPLATE = Path("spec").child("template")
CLIQUES = TEMPLATE.child("cliques")
GROUPS = TEMPLATE.child("podCliqueScalingGroups")
TEMPLATES = TEMPLATE.child("resourceClaimTemplates")
PCS_SHARING = TEMPLATE.child("resourceSharing")

TEMPLATE_NAME_REQUIRED = "template name is required"
DEVICE_REQUESTS_REQUIRED = "at least one device request is required"
REFERENCE_NAME_REQUIRED = "reference name is required"
NAMESPACE_OF_INTERNAL_TEMPLATE = "namespace must be empty when name matches an internal resourceClaimTemplate"
PCS_FILTER_EMPTY = "filter must specify at least one childCliqueNames or childScalingGroupNames entry"
GROUP_FILTER_EMPTY = "filter must specify at least one childCliqueNames entry"
IMMUTABLE = "field is immutable"
CLIQUE_COMPOSITION = "not allowed to change clique composition"
NEW_CLIQUE = "not allowed to change clique composition, new clique name '{}' is not allowed"
GROUP_COMPOSITION = "not allowed to add or remove PodCliqueScalingGroupConfigs"
NEW_GROUP = "not allowed to change scaling group composition, new scaling group name '{}' is not allowed"

PCS_SHARING_TYPE: GoType = Slice(of_model(PCSResourceSharingSpec))
GROUP_SHARING_TYPE: GoType = Slice(of_model(PCSGResourceSharingSpec))
CLIQUE_SHARING_TYPE: GoType = Slice(of_model(ResourceSharingSpec))
TEMPLATES_TYPE: GoType = Slice(of_model(ResourceClaimTemplateConfig, templateSpec=dra.TEMPLATE_SPEC))
"""Grove's lists as Go types: how ``Semantic.DeepEqual`` compares them and ``json.Marshal`` prints them."""


def validate_create(spec: PodCliqueSetSpec) -> Iterator[FieldError]:
    """Every resource-sharing error of one PodCliqueSet in Grove's order (T1 to T3; R1 to R4 and F1 to
    F3, then R1 to R4 of each clique, R1 to R4 and G1, G2 of each scaling group), made as asked for,
    so that a caller reading the first ones does no more work than they take."""
    template = spec.template
    internal = {t.name for t in template.resource_claim_templates or ()}
    yield from validate_resource_claim_templates(template.resource_claim_templates or (), TEMPLATES)
    clique_names = {c.name for c in template.cliques}
    group_names = {g.name for g in template.pod_clique_scaling_groups}
    yield from validate_pcs_resource_sharing(template.resource_sharing or (), PCS_SHARING, internal, clique_names, group_names)
    for c, clique in enumerate(template.cliques):
        if clique.resource_sharing:  # a path is made for a list that has entries alone
            yield from validate_resource_sharing_specs(clique.resource_sharing, CLIQUES.index(c).child("resourceSharing"), internal)
    yield from validate_pcsg_resource_sharings(template.pod_clique_scaling_groups, internal)


def validate_resource_claim_templates(templates: Sequence[ResourceClaimTemplateConfig], path: Path) -> Iterator[FieldError]:
    """T1 to T3: every template has a name and a device request, and no name is used twice."""
    counts: dict[str, int] = {}
    for i, template in enumerate(templates):
        if template.name == "":
            yield required(path.index(i).child("name"), TEMPLATE_NAME_REQUIRED)
        if template.device_requests == 0:
            yield required(path.index(i).child("templateSpec", "spec", "devices", "requests"), DEVICE_REQUESTS_REQUIRED)
        counts[template.name] = counts.get(template.name, 0) + 1
    duplicated = [name for name, count in counts.items() if count > 1]
    if duplicated:
        yield duplicate(path.child("name"), duplicated)


def validate_resource_sharing_specs(entries: Sequence[ResourceSharingSpec], path: Path, internal: set[str]) -> Iterator[FieldError]:
    """R1 to R4 for one list: the checks every level shares."""
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if entry.name == "":
            yield required(path.index(i).child("name"), REFERENCE_NAME_REQUIRED)
        elif entry.name in seen:
            yield duplicate(path.index(i).child("name"), GoString(entry.name))
        seen.add(entry.name)
        if entry.namespace and entry.name and entry.name in internal:
            yield invalid(path.index(i).child("namespace"), GoString(entry.namespace), NAMESPACE_OF_INTERNAL_TEMPLATE)
        if entry.scope not in SUPPORTED_SCOPES:
            yield not_supported(path.index(i).child("scope"), entry.scope, SUPPORTED_SCOPES)


def validate_pcs_resource_sharing(
    entries: Sequence[PCSResourceSharingSpec], path: Path, internal: set[str], cliques: set[str], groups: set[str]
) -> Iterator[FieldError]:
    """R1 to R4, then F1 to F3: a filter names at least one child, and only children that exist."""
    yield from validate_resource_sharing_specs(entries, path, internal)
    for i, entry in enumerate(entries):
        flt = entry.filter
        if flt is None:
            continue
        if not flt.child_clique_names and not flt.child_scaling_group_names:
            yield required(path.index(i).child("filter"), PCS_FILTER_EMPTY)
        yield from _not_found(flt.child_clique_names, cliques, path, i, "childCliqueNames")
        yield from _not_found(flt.child_scaling_group_names, groups, path, i, "childScalingGroupNames")


def validate_pcsg_resource_sharings(groups: Sequence[PodCliqueScalingGroupConfig], internal: set[str]) -> Iterator[FieldError]:
    """R1 to R4 of each group's list, then G1 and G2: a filter names a clique, and only members."""
    for g, group in enumerate(groups):
        if not group.resource_sharing:
            continue
        path = GROUPS.index(g).child("resourceSharing")
        yield from validate_resource_sharing_specs(group.resource_sharing, path, internal)
        members = set(group.clique_names)
        for i, entry in enumerate(group.resource_sharing):
            flt = entry.filter
            if flt is None:
                continue
            if not flt.child_clique_names:
                yield required(path.index(i).child("filter"), GROUP_FILTER_EMPTY)
            yield from _not_found(flt.child_clique_names, members, path, i, "childCliqueNames")


def _not_found(names: list[str], known: set[str], path: Path, entry: int, field: str) -> Iterator[FieldError]:
    """F2, F3, G2: each name of the filter's ``field`` of entry ``entry`` that is not ``known``."""
    if known.issuperset(names):
        return
    for j, name in enumerate(names):
        if name not in known:
            yield not_found(path.index(entry).child("filter", field).index(j), GoString(name))


def validate_update(new: PodCliqueSetSpec, old: PodCliqueSetSpec) -> Iterator[FieldError]:
    """``validateUpdate``'s errors for an UPDATE whose new object passed the create-time rules: the
    composition, which decides which lists appear, then the lists, immutable (U1 to U4). The
    templates must decode (the validator checks first), else ``DecodeError``."""
    yield from validate_cliques_update(new, old)
    yield from validate_scaling_groups_update(new, old)
    new_templates, old_templates = new.template.resource_claim_templates, old.template.resource_claim_templates
    if not _sent_alike(new_templates, old_templates):
        decoded = _decoded(new_templates)
        if not semantic_equal(TEMPLATES_TYPE, decoded, _decoded(old_templates)):
            yield invalid(TEMPLATES, TEMPLATES_TYPE.marshal(decoded), IMMUTABLE)
    yield from _immutable(PCS_SHARING_TYPE, new.template.resource_sharing, old.template.resource_sharing, PCS_SHARING)


def validate_cliques_update(new: PodCliqueSetSpec, old: PodCliqueSetSpec) -> Iterator[FieldError]:
    if len(new.template.cliques) != len(old.template.cliques):
        yield forbidden(CLIQUES, CLIQUE_COMPOSITION)
    old_by_name = {c.name: c for c in old.template.cliques}
    for i, clique in enumerate(new.template.cliques):
        previous = old_by_name.get(clique.name)
        if previous is None:
            yield forbidden(CLIQUES.child("name"), NEW_CLIQUE.format(clique.name))
            continue
        path = CLIQUES.index(i).child("resourceSharing")
        yield from _immutable(CLIQUE_SHARING_TYPE, clique.resource_sharing, previous.resource_sharing, path)


def validate_scaling_groups_update(new: PodCliqueSetSpec, old: PodCliqueSetSpec) -> Iterator[FieldError]:
    """A changed number of scaling groups ends these checks early; Grove's path has no index here."""
    new_groups, old_groups = new.template.pod_clique_scaling_groups, old.template.pod_clique_scaling_groups
    if len(new_groups) != len(old_groups):
        yield forbidden(GROUPS, GROUP_COMPOSITION)
        return
    old_by_name = {g.name: g for g in old_groups}
    for group in new_groups:
        previous = old_by_name.get(group.name)
        if previous is None:
            yield forbidden(GROUPS.child("name"), NEW_GROUP.format(group.name))
            continue
        yield from _immutable(GROUP_SHARING_TYPE, group.resource_sharing, previous.resource_sharing, GROUPS.child("resourceSharing"))


def _immutable(go_type: GoType, new: Entries | None, old: Entries | None, path: Path) -> Iterator[FieldError]:
    """``ValidateImmutableField``: entries of strings and lists of strings alone compare as
    ``Semantic.DeepEqual`` compares them (a nil list is an empty one)."""
    if list(new or ()) != list(old or ()):
        yield invalid(path, go_type.marshal(new), IMMUTABLE)


def _sent_alike(new: Sequence[ResourceClaimTemplateConfig] | None, old: Sequence[ResourceClaimTemplateConfig] | None) -> bool:
    """Whether both lists were sent as the same JSON, which Go decodes alike: the usual UPDATE, as
    templates are immutable. Parameters nested too deep to write are compared as Go compares them."""
    try:
        return rawjson.dumps([(t.name, t.template_spec) for t in new or ()]) == rawjson.dumps([(t.name, t.template_spec) for t in old or ()])
    except orjson.JSONEncodeError:
        return False


def _decoded(templates: Sequence[ResourceClaimTemplateConfig] | None) -> list[dict[str, Any]] | None:
    """The templates as Go holds them (their specs decoded into the DRA types); None for nil."""
    if templates is None:
        return None
    specs = dra.decode_templates([t.template_spec for t in templates])
    return [{"name": t.name, "templateSpec": spec} for t, spec in zip(templates, specs, strict=True)]

