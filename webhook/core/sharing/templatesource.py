"""Which template a claim's spec comes from (BEHAVIOUR.md §6.1).

An entry with no namespace whose name matches an internal template uses it; anything else names a
``resource.k8s.io/v1`` ResourceClaimTemplate in the entry's namespace, or the PodCliqueSet's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webhook.core.model.meta import ObjectKey
from webhook.core.model.podcliqueset import PodCliqueSet, ResourceSharingSpec


@dataclass(frozen=True, slots=True)
class InternalTemplate:
    """``spec.template.resourceClaimTemplates[]`` entry: its ``templateSpec.spec`` is the claim spec."""

    name: str
    claim_spec: dict[str, Any]


def template_source(pcs: PodCliqueSet, entry: ResourceSharingSpec) -> InternalTemplate | ObjectKey:
    """The internal template an entry names, or the ResourceClaimTemplate object to read."""
    if not entry.namespace:
        internal = pcs.spec.template.internal_template(entry.name)
        if internal is not None:
            return InternalTemplate(entry.name, internal.claim_spec())
    return ObjectKey(entry.namespace or pcs.namespace, entry.name)
