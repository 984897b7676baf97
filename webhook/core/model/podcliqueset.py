"""A PodCliqueSet as every decision reads it: its identity, replicas, resource sharing and templates.

One representation serves the validating webhook, the stores the pod webhook reads, the claim
reconciler and the claims command (``reader.read_podcliqueset`` makes it from JSON). Frozen msgspec
structs all the way down: immutable, about the size of their fields, untracked by the garbage
collector (they form no cycles), and the cheapest objects to build on every review; the
names that repeat from one PodCliqueSet to the next (entry, clique and group names, scopes,
namespaces) are interned, so the thousands of PodCliqueSets a store holds share them.

Every list keeps the spec's order, so entry indices and "the first clique of that name" mean what
they mean in the spec, and replica counts are as the spec gives them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import msgspec

from webhook.core.model.meta import ObjectKey


# ``ResourceSharingScope``: one claim per owner, or one per replica of the owner. An entry keeps its
# scope as the string sent (Grove ignores one of another value), so the scopes are strings too.
ALL_REPLICAS: Final = "AllReplicas"
PER_REPLICA: Final = "PerReplica"
SUPPORTED_SCOPES = [ALL_REPLICAS, PER_REPLICA]


class EntryFilter(msgspec.Struct, frozen=True, gc=False):
    """An entry's ``filter``: the cliques (and, on the PodCliqueSet level, scaling groups) it names."""

    clique_names: tuple[str, ...] = ()
    scaling_group_names: tuple[str, ...] = ()

    def names_only(self, cliques: set[str] | frozenset[str], groups: set[str] | frozenset[str]) -> bool:
        """Whether the filter names something, and only ``cliques`` and ``groups``: a filter Grove's
        rules let through when these are the children that exist."""
        named = self.clique_names or self.scaling_group_names
        return bool(named) and cliques.issuperset(self.clique_names) and groups.issuperset(self.scaling_group_names)

    def names_any(self, names: set[str]) -> bool:
        """Whether either list names one of ``names``: whether the filter leaves in some pod of the
        cliques and scaling groups ``names`` holds, as ``SharingEntry.selects`` compares a pod's
        names with both lists."""
        return not (names.isdisjoint(self.clique_names) and names.isdisjoint(self.scaling_group_names))


class SharingEntry(msgspec.Struct, frozen=True, gc=False):
    """One ``resourceSharing`` entry of any level; ``filter`` is None when the entry has none (a
    clique's entries never have one, a scaling group's names only cliques)."""

    name: str
    scope: str
    namespace: str = ""
    filter: EntryFilter | None = None

    def selects(self, clique: str, scaling_group: str | None = None) -> bool:
        """Whether the entry's filter leaves a pod of clique ``clique`` (in ``scaling_group``) in
        (BEHAVIOUR.md §5.3). A PodCliqueSet-level filter compares both its lists with both
        names; a scaling group's names only cliques and is asked about the clique alone; an entry
        without a filter selects every pod."""
        flt = self.filter
        if flt is None:
            return True
        names = (clique,) if scaling_group is None else (clique, scaling_group)
        return any(n in flt.clique_names or n in flt.scaling_group_names for n in names)


Entries = tuple[SharingEntry, ...]


class CliqueTemplate(msgspec.Struct, frozen=True, gc=False):
    """A clique template (``spec.template.cliques[]``): its replicas are None when unset."""

    name: str
    replicas: int | None
    entries: Entries
    sharing_sent: bool = True
    """Whether ``resourceSharing`` was sent: Go prints a list that was not sent as ``null``."""
    max_replicas: int | None = None
    """``spec.autoScalingConfig.maxReplicas``: the most an autoscaler may scale its PodCliques to,
    and so how long the replica indices in claim names may grow."""


class ScalingGroupConfig(msgspec.Struct, frozen=True, gc=False):
    """A scaling-group config (``spec.template.podCliqueScalingGroups[]``)."""

    name: str
    clique_names: tuple[str, ...]
    replicas: int | None
    entries: Entries
    sharing_sent: bool = True
    max_replicas: int | None = None
    """``scaleConfig.maxReplicas``: the most an autoscaler may scale the group's objects to."""

    def template_replicas(self) -> int:
        """Replicas a new scaling group object starts with (the CRD defaults an absent value to 1)."""
        return 1 if self.replicas is None else self.replicas


class ClaimTemplate(msgspec.Struct, frozen=True, gc=False):
    """An internal template (``spec.template.resourceClaimTemplates[]``), its ``templateSpec`` as sent."""

    name: str
    spec: dict[str, Any]
    requests: int
    """How many entries ``templateSpec.spec.devices.requests`` holds (0 when any level is absent),
    counted as it was read (``device_requests``)."""

    def claim_spec(self) -> dict[str, Any]:
        """``templateSpec.spec``: the spec a claim made from it gets (its metadata is not copied, §6.4)."""
        spec = self.spec.get("spec")
        return spec if isinstance(spec, dict) else {}


def device_requests(template_spec: dict[str, Any]) -> int:
    """``ClaimTemplate.requests`` of a ``templateSpec`` as parsed."""
    spec = template_spec.get("spec")
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    return len(requests) if isinstance(requests, list) else 0


class DecodableTemplates(tuple[ClaimTemplate, ...]):
    """Templates Go's decoder is known to take: msgspec checked them as the spec was read from its
    JSON text (``reader``), so that the validating webhook need not decode them again; ``text``
    is the JSON text of their list, to tell two lists sent alike without writing them out. Equal
    to the same templates in a plain tuple: how they were read is not what they are."""

    text: bytes

    def __new__(cls, templates: Iterable[ClaimTemplate], text: bytes) -> DecodableTemplates:
        made = super().__new__(cls, templates)
        made.text = text
        return made


class PodCliqueSetSpec(msgspec.Struct, frozen=True, gc=False):
    """A PodCliqueSet's ``spec``, as far as resource sharing goes: everything a decision reads but
    the object's name, which the claim names start with. Many PodCliqueSets share one (a workload
    deployed under several names), so what depends on the spec alone can be found once."""

    replicas: int
    entries: Entries
    cliques: tuple[CliqueTemplate, ...]
    scaling_groups: tuple[ScalingGroupConfig, ...]
    templates: tuple[ClaimTemplate, ...] = ()
    sharing_sent: bool = True
    templates_sent: bool = True

    def clique(self, name: str) -> CliqueTemplate | None:
        """The first clique template of that name, as Grove's lookup finds it."""
        for clique in self.cliques:
            if clique.name == name:
                return clique
        return None

    def clique_index(self, name: str) -> int | None:
        """The position of the first clique template of that name (for field paths)."""
        for i, clique in enumerate(self.cliques):
            if clique.name == name:
                return i
        return None

    def template(self, name: str) -> ClaimTemplate | None:
        """The first internal template of that name."""
        for template in self.templates:
            if template.name == name:
                return template
        return None


class PodCliqueSet(msgspec.Struct, frozen=True, gc=False):
    """A ``grove.io/v1alpha1`` PodCliqueSet, as far as resource sharing goes."""

    namespace: str
    name: str
    uid: str
    spec: PodCliqueSetSpec
    deleting: bool = False
    """It has a deletionTimestamp: the garbage collector is removing it and what it owns."""

    @property
    def key(self) -> ObjectKey:
        return ObjectKey(self.namespace, self.name)

    def without_templates(self) -> PodCliqueSet:
        """What the object stores keep: the pod webhook never reads a template."""
        return msgspec.structs.replace(self, spec=msgspec.structs.replace(self.spec, templates=()))
