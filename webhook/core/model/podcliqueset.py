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

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final, overload

import msgspec
import orjson

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


class ClaimTemplates(Sequence[ClaimTemplate]):
    """A spec's internal templates, in the spec's order: their names and device-request counts at
    hand (all Grove's rules read), each template's ``templateSpec`` only when first asked for (a
    claim made from it, the message of an UPDATE that changed them, Go's decoding of a list
    msgspec could not check).

    Read from the list's JSON text when msgspec found that Go's decoder takes it
    (``reader.read_templates``), they keep that text (``text``) and are parsed from it when a
    template is first asked for, as the reader parses one (a ``null`` name reads as ""); read
    from parsed JSON or through the schema, they are the templates given and ``text`` is None.
    Two lists of the same templates are equal however they were read."""

    __slots__ = ("names", "requests", "text", "_items")

    def __init__(self, templates: Iterable[ClaimTemplate] = ()) -> None:
        self._items: tuple[ClaimTemplate, ...] | None = tuple(templates)
        self.names = tuple([t.name for t in self._items])
        self.requests = tuple([t.requests for t in self._items])
        self.text: bytes | None = None
        """The list's JSON text, when read from it and Go's decoder is known to take it."""

    @classmethod
    def decodable(cls, names: list[str], requests: list[int], text: bytes) -> ClaimTemplates:
        """Templates Go's decoder takes, of these names and counts, kept as the list's JSON
        ``text``: every item an object whose ``templateSpec`` is an object."""
        made = cls.__new__(cls)
        made._items, made.names, made.requests, made.text = None, tuple(names), tuple(requests), text
        return made

    def _templates(self) -> tuple[ClaimTemplate, ...]:
        if self._items is None:
            items = zip(orjson.loads(self.text) if self.text is not None else [], self.requests, strict=True)
            self._items = tuple([ClaimTemplate(t.get("name") or "", t["templateSpec"], n) for t, n in items])
        return self._items

    @overload
    def __getitem__(self, index: int) -> ClaimTemplate: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ClaimTemplate, ...]: ...

    def __getitem__(self, index: int | slice) -> ClaimTemplate | tuple[ClaimTemplate, ...]:
        return self._templates()[index]

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[ClaimTemplate]:
        return iter(self._templates())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClaimTemplates):
            return NotImplemented
        return (self.text is not None and self.text == other.text) or self._templates() == other._templates()

    __hash__ = None  # type: ignore[assignment]  # a template's spec is a dict

    def __repr__(self) -> str:
        return f"ClaimTemplates({list(self._templates())!r})"


NO_TEMPLATES = ClaimTemplates()


class PodCliqueSetSpec(msgspec.Struct, frozen=True, gc=False):
    """A PodCliqueSet's ``spec``, as far as resource sharing goes: everything a decision reads but
    the object's name, which the claim names start with. Many PodCliqueSets share one (a workload
    deployed under several names), so what depends on the spec alone can be found once."""

    replicas: int
    entries: Entries
    cliques: tuple[CliqueTemplate, ...]
    scaling_groups: tuple[ScalingGroupConfig, ...]
    templates: ClaimTemplates = NO_TEMPLATES
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
        names = self.templates.names
        return self.templates[names.index(name)] if name in names else None


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
        return msgspec.structs.replace(self, spec=msgspec.structs.replace(self.spec, templates=NO_TEMPLATES))
