"""Which template a claim's spec comes from (BEHAVIOUR.md §6.1).

An entry with no namespace whose name matches an internal template uses it; anything else names a
``resource.k8s.io/v1`` ResourceClaimTemplate in the entry's namespace, or the PodCliqueSet's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.projection import SharingEntry


@dataclass(frozen=True, slots=True)
class InternalTemplate:
    """``spec.template.resourceClaimTemplates[]`` entry: its ``templateSpec.spec`` is the claim spec."""

    name: str
    claim_spec: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ExternalTemplate:
    """A ResourceClaimTemplate object to read; its ``spec.spec`` is the claim spec."""

    namespace: str
    name: str


def template_source(pcs: PodCliqueSet, entry: SharingEntry) -> InternalTemplate | ExternalTemplate:
    if not entry.namespace:
        internal = pcs.spec.template.internal_template(entry.name)
        if internal is not None:
            spec = internal.template_spec.get("spec")
            return InternalTemplate(entry.name, spec if isinstance(spec, dict) else {})
    return ExternalTemplate(entry.namespace or pcs.metadata.namespace, entry.name)
