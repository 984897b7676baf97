"""Who controls a claim, and the metadata change that makes an existing claim ours (§4.6, §4.7),
as controller-runtime's ``SetControllerReference`` does it for Grove: a claim with no controller, or
one controlled by an earlier object of the owner's kind and name, gets the owner's reference; one
controlled by anything else is refused. Grove's labels are merged in; ``spec`` is never changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from webhook.core.model.meta import OwnerReference, controller_of
from webhook.core.sharing.desired import DesiredClaim


def controlled_by_other(references: Sequence[OwnerReference], owner: OwnerReference) -> OwnerReference | None:
    """The claim's controller when not ``owner``: such a claim is neither adopted, changed nor deleted."""
    controller = controller_of(references)
    return controller if controller is not None and not controller.same_object(owner) else None


@dataclass(frozen=True, slots=True)
class OwnedByOther:
    """The claim has a controller that is not the desired owner: reported, never changed."""

    controller: OwnerReference

    def message(self, namespace: str, name: str) -> str:
        return f"Object {namespace}/{name} is already owned by another {self.controller.kind} controller {self.controller.name}"


@dataclass(frozen=True, slots=True)
class MetadataChange:
    """The labels that differ and, when the controller reference changes, the whole new list."""

    labels: dict[str, str]
    owner_references: list[OwnerReference] | None

    @property
    def adopts(self) -> bool:
        return self.owner_references is not None

    def merge_patch(self, resource_version: str) -> dict[str, Any]:
        """A JSON merge patch. A new reference list replaces the old one whole, so it carries the
        resourceVersion it was computed from: a concurrent change to the list fails with 409
        instead of being overwritten."""
        metadata: dict[str, Any] = {}
        if self.labels:
            metadata["labels"] = self.labels
        if self.owner_references is not None:
            metadata["ownerReferences"] = [r.to_api() for r in self.owner_references]
            metadata["resourceVersion"] = resource_version
        return {"metadata": metadata}


def plan_change(labels: Mapping[str, str], references: Sequence[OwnerReference], desired: DesiredClaim) -> MetadataChange | OwnedByOther | None:
    """What to change on an existing claim so that it matches ``desired``; None when nothing."""
    other = controlled_by_other(references, desired.owner)
    if other is not None:
        return OwnedByOther(other)
    changed_labels = {k: v for k, v in desired.labels.items() if labels.get(k) != v}
    new_references = list(references)
    index = next((i for i, r in enumerate(references) if r.same_object(desired.owner)), None)
    if index is None:
        new_references.append(desired.owner)
    else:
        new_references[index] = desired.owner
    changed_references = new_references if new_references != list(references) else None
    if not changed_labels and changed_references is None:
        return None
    return MetadataChange(changed_labels, changed_references)
