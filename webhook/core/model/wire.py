"""A spec as the validating webhook's review decoding takes it: in the body's one pass, by msgspec,
into the declarations below (``SpecWire``); ``read_wire`` turns it into the model.

The declarations take a subset of what Go's decoder takes, and read it as Go does: each member of
the type Go gives it, an ``int32`` within its range, every member no decision reads skipped (a
clique's pod template, the bulk of a spec). What they refuse, though Go may take it (``null`` where
Go reads a zero value, text that is not ASCII, whose skipped parts msgspec does not check as
UTF-8), sends the body to be decoded whole and read from the parsed JSON by ``reader``, which
refuses or reads it as before; so msgspec only decides how fast a spec is read, never what is read
of it.

The wire types mirror the JSON's nesting (a clique's replicas under its ``spec``, a filter per
level); ``read_wire`` turns them into the model, whose shape is the decisions'. Members the model
does not keep (a clique's ``labels``) are declared to be checked, as the reader checks them. A
spec read so is remembered by these declarations written back out (``spectext.json_key``): the
members no decision reads are not in them, so two specs that differ only there are one. Names
are not interned as the reader interns them for the stores: only the validating webhook reads a
spec so, and keeps what it read only in its bounded memo of specs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Struct, UnsetType

from webhook.core.model.meta import INT32
from webhook.core.model.podcliqueset import (
    NO_TEMPLATES,
    ClaimTemplates,
    CliqueTemplate,
    Entries,
    EntryFilter,
    PodCliqueSetSpec,
    ScalingGroupConfig,
    SharingEntry,
)

Int32 = Annotated[int, msgspec.Meta(ge=INT32.start, le=INT32.stop - 1)]
Names = tuple[str, ...]


class _SetFilter(Struct, frozen=True, gc=False, rename="camel"):
    """A PodCliqueSet-level entry's filter."""

    child_clique_names: Names = ()
    child_scaling_group_names: Names = ()


class _GroupFilter(Struct, frozen=True, gc=False, rename="camel"):
    """A scaling group's entry's filter: it names cliques only (other members are not Go's)."""

    child_clique_names: Names = ()


class _CliqueEntry(Struct, frozen=True, gc=False):
    name: str = ""
    scope: str = ""
    namespace: str = ""


class _GroupEntry(_CliqueEntry, frozen=True, gc=False):
    filter: _GroupFilter | None = None


class _SetEntry(_CliqueEntry, frozen=True, gc=False):
    filter: _SetFilter | None = None


class _Scaling(Struct, frozen=True, gc=False, rename="camel"):
    """An ``autoScalingConfig`` or a ``scaleConfig``: only its ``maxReplicas`` is read."""

    max_replicas: Int32 | None = None


class _CliqueSpec(Struct, frozen=True, gc=False, rename="camel"):
    replicas: Int32 | None = None
    auto_scaling_config: _Scaling | None = None


class _Clique(Struct, frozen=True, gc=False, rename="camel"):
    name: str = ""
    labels: dict[str, str] | None = None
    resource_sharing: tuple[_CliqueEntry, ...] | None | UnsetType = UNSET
    spec: _CliqueSpec = _CliqueSpec()


class _Group(Struct, frozen=True, gc=False, rename="camel"):
    name: str = ""
    clique_names: Names = ()
    replicas: Int32 | None = None
    resource_sharing: tuple[_GroupEntry, ...] | None | UnsetType = UNSET
    scale_config: _Scaling | None = None


class _Template(Struct, frozen=True, gc=False, rename="camel"):
    resource_sharing: tuple[_SetEntry, ...] | None | UnsetType = UNSET
    cliques: tuple[_Clique, ...] = ()
    pod_clique_scaling_groups: tuple[_Group, ...] = ()
    resource_claim_templates: msgspec.Raw = msgspec.Raw(b"")
    """Kept as its JSON text, which msgspec checks for Go's decoder (``reader.read_templates``)."""


class SpecWire(Struct, frozen=True, gc=False):
    """A spec as the review's decoding takes it (``PodCliqueSetJson``)."""

    replicas: Int32 = 0
    template: _Template = _Template()


TemplatesReader = Callable[[Any], ClaimTemplates]
"""Reads a spec's templates: parsed, or as their JSON text (``msgspec.Raw``)."""


def read_wire(wire: SpecWire, read_templates: TemplatesReader) -> PodCliqueSetSpec:
    """The spec ``wire`` holds, its internal templates (kept as JSON text) read by ``read_templates``."""
    template = wire.template
    templates = template.resource_claim_templates
    return PodCliqueSetSpec(
        wire.replicas,
        _set_entries(template.resource_sharing),
        tuple([_clique(c) for c in template.cliques]),
        tuple([_group(g) for g in template.pod_clique_scaling_groups]),
        read_templates(templates) if templates else NO_TEMPLATES,
        template.resource_sharing is not UNSET,
        len(templates) > 0,
    )


def _set_entries(entries: tuple[_SetEntry, ...] | None | UnsetType) -> Entries:
    if not entries:
        return ()
    return tuple([
        SharingEntry(
            e.name, e.scope, e.namespace,
            None if (f := e.filter) is None else EntryFilter(f.child_clique_names, f.child_scaling_group_names),
        )
        for e in entries
    ])


def _clique(clique: _Clique) -> CliqueTemplate:
    spec, sharing = clique.spec, clique.resource_sharing
    scaling = spec.auto_scaling_config
    return CliqueTemplate(
        clique.name,
        spec.replicas,
        tuple([SharingEntry(e.name, e.scope, e.namespace) for e in sharing]) if sharing else (),
        sharing is not UNSET,
        None if scaling is None else scaling.max_replicas,
    )


def _group(group: _Group) -> ScalingGroupConfig:
    sharing, scaling = group.resource_sharing, group.scale_config
    return ScalingGroupConfig(
        group.name,
        group.clique_names,
        group.replicas,
        tuple([
            SharingEntry(e.name, e.scope, e.namespace, None if (f := e.filter) is None else EntryFilter(f.child_clique_names))
            for e in sharing
        ]) if sharing else (),
        sharing is not UNSET,
        None if scaling is None else scaling.max_replicas,
    )

