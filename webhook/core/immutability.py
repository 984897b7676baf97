"""UPDATE-only rules: resource sharing cannot change after creation (resource-sharing.md §2.10).

Grove reports a changed list as ``Invalid: <new list as JSON>: field is immutable`` (U1 to U4) and
a changed composition of cliques or scaling groups as ``Forbidden``. The composition checks are here
because they decide which immutability errors appear: a new clique name is skipped, and a changed
scaling-group count ends the scaling-group checks early. Order: cliques, scaling groups, templates
(U1), then the PodCliqueSet list (U2).
"""

from __future__ import annotations

from collections.abc import Sequence

from webhook.core import semantic
from webhook.core.fielderrors import ErrorList, Path, forbidden, invalid
from webhook.core.podcliqueset import PodCliqueSet, ResourceSharingSpec

IMMUTABLE = "field is immutable"
TEMPLATE = Path("spec").child("template")


def _sharing_value(entries: Sequence[ResourceSharingSpec]) -> list[dict[str, object]]:
    return [e.go_value() for e in entries]


def validate_update(new: PodCliqueSet, old: PodCliqueSet) -> ErrorList:
    errors = _cliques(new, old)
    errors += _scaling_groups(new, old)
    new_templates = [t.go_value() for t in new.spec.template.resource_claim_templates]
    old_templates = [t.go_value() for t in old.spec.template.resource_claim_templates]
    if not semantic.equal(new_templates, old_templates):
        errors.append(invalid(TEMPLATE.child("resourceClaimTemplates"), new_templates, IMMUTABLE))
    new_sharing = _sharing_value(new.spec.template.resource_sharing)
    if new_sharing != _sharing_value(old.spec.template.resource_sharing):
        errors.append(invalid(TEMPLATE.child("resourceSharing"), new_sharing, IMMUTABLE))
    return errors


def _cliques(new: PodCliqueSet, old: PodCliqueSet) -> ErrorList:
    path = TEMPLATE.child("cliques")
    new_cliques, old_cliques = new.spec.template.cliques, old.spec.template.cliques
    errors: ErrorList = []
    if len(new_cliques) != len(old_cliques):
        errors.append(forbidden(path, "not allowed to change clique composition"))
    old_by_name = {c.name: c for c in old_cliques}
    for i, clique in enumerate(new_cliques):
        previous = old_by_name.get(clique.name)
        if previous is None:
            errors.append(
                forbidden(
                    path.child("name"),
                    f"not allowed to change clique composition, new clique name '{clique.name}' is not allowed",
                )
            )
            continue
        value = _sharing_value(clique.resource_sharing)
        if value != _sharing_value(previous.resource_sharing):
            errors.append(invalid(path.index(i).child("resourceSharing"), value, IMMUTABLE))
    return errors


def _scaling_groups(new: PodCliqueSet, old: PodCliqueSet) -> ErrorList:
    path = TEMPLATE.child("podCliqueScalingGroups")
    new_groups, old_groups = new.spec.template.pod_clique_scaling_groups, old.spec.template.pod_clique_scaling_groups
    if len(new_groups) != len(old_groups):
        return [forbidden(path, "not allowed to add or remove PodCliqueScalingGroupConfigs")]
    errors: ErrorList = []
    old_by_name = {g.name: g for g in old_groups}
    for group in new_groups:
        previous = old_by_name.get(group.name)
        if previous is None:
            errors.append(
                forbidden(
                    path.child("name"),
                    f"not allowed to change scaling group composition, new scaling group name '{group.name}' is not allowed",
                )
            )
            continue
        value = _sharing_value(group.resource_sharing)
        if value != _sharing_value(previous.resource_sharing):
            errors.append(invalid(path.child("resourceSharing"), value, IMMUTABLE))
    return errors
