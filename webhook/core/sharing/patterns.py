"""Every claim name a PodCliqueSet spec will produce, as patterns with the replica indices left open.

Grove names a claim ``<owner>-all-<entry>`` or ``<owner>-<index>-<entry>`` and owners carry indices
of their own (``<pcs>-<i>-<group>-<j>-<clique>``), so one entry on one kind of owner produces a
family of names that differ only in their indices. Listing the family would cost as much as the
replica counts (``spec.replicas`` alone may be two billion); a pattern costs as much as the name.

A pattern is the name as ``naming`` makes its parts, the indices open; split at ``-``, its
segments are literal segments and open segments standing for any decimal index in ``range(n)``.
Indices are always printed between two hyphens with no leading zero, so two names are equal
exactly when their segments are, which makes "can these two families share a name" a
segment-by-segment question. The owners are those of
``owners.places`` walked with open indices, named by ``naming``'s formulas.

Every claim name of a PodCliqueSet starts with the PodCliqueSet's name, so the patterns of a spec
leave it out: their first segment is empty, and a claim's name is the PodCliqueSet's name followed
by its pattern's name. Which names two families share, and how long they get, is then the same
whatever the PodCliqueSet is called.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from webhook.core.model.podcliqueset import ALL_REPLICAS, PER_REPLICA, Entries, PodCliqueSetSpec
from webhook.core.sharing import naming
from webhook.core.sharing.desired import claims_needed
from webhook.core.sharing.naming import OpenIndex, Parts
from webhook.core.sharing.owners import PCS_ENTRIES, Counts, Level, clique_templates, entries_source, level_entries, places, planned_replicas

Segment = str | int
"""A literal segment, or the size ``n`` of an open index (any of ``0 .. n-1``)."""


class NamePattern(NamedTuple):
    """The names one entry produces on one kind of owner."""

    list_path: str
    """The field path of the entry's list, e.g. ``spec.template.cliques[0].resourceSharing``."""
    position: int
    """The entry's position in it."""
    owner: Parts
    """The owners' names' parts after the PodCliqueSet's name, the replica indices open."""
    entry: str
    """The entry's name (its template's)."""
    replica: OpenIndex | None
    """The owner's replicas, for a PerReplica entry (None for AllReplicas)."""
    first: str
    """The family's first name (every open index 0)."""
    longest: int
    """Bytes the family's longest name takes (the first with each open index at its largest)."""

    @property
    def source(self) -> str:
        """The entry's field path, e.g. ``spec.template.cliques[0].resourceSharing[1]``."""
        return f"{self.list_path}[{self.position}]"

    @property
    def parts(self) -> Parts:
        """The names' parts as ``naming`` makes them, the replica indices open."""
        return naming.claim_parts(self.owner, self.entry, self.replica)

    @property
    def segments(self) -> tuple[Segment, ...]:
        """The parts split at ``-``, each open index as its size: what the search for shared names
        compares (made when asked: most specs' families are told apart by their shapes)."""
        segments: list[Segment] = []
        for part in self.parts:
            if type(part) is str:
                segments += part.split("-")
            else:
                segments.append(part.size if type(part) is OpenIndex else str(part))
        return tuple(segments)

    def name(self, indices: tuple[int, ...] | list[int] = ()) -> str:
        """One name of the family: open indices from ``indices`` in order (0 for those not given)."""
        if not indices:
            return self.first
        given = iter(indices)
        return "-".join([s if type(s) is str else str(next(given, 0)) for s in self.segments])

    def open_sizes(self) -> list[int]:
        return [p.size for p in self.parts if type(p) is OpenIndex]

    def shape(self) -> tuple[str | None, ...]:
        """The segments with every number and open index blanked (None): two families can only
        share a name when their shapes are equal. The first name's segments are the segments with
        each open index 0, a number too (and the most common: tested first)."""
        shape: list[str | None] = []
        for s in self.first.split("-"):
            shape.append(None if s == "0" or (s.isdigit() and _is_number(s)) else s)
        return tuple(shape)


def _is_number(segment: str) -> bool:
    """Whether a literal segment is a number as an index is printed (no sign, no leading zero)."""
    return segment.isdigit() and segment.isascii() and (segment == "0" or segment[0] != "0")


def _open(count: int) -> tuple[OpenIndex, ...]:
    """One open index standing for all of ``range(count)`` (none when the count is 0)."""
    return (OpenIndex(count),) if count > 0 else ()


PCS_NAME = ""
"""Where the PodCliqueSet's name stands in a spec's patterns."""


def name_patterns(spec: PodCliqueSetSpec, counts: Counts = planned_replicas) -> list[NamePattern]:
    """The patterns of every claim the spec produces, in the order Grove creates them: the owners of
    ``owners.places`` with open indices at the replica counts ``counts`` gives, each owner's
    AllReplicas entries, then its PerReplica entries (with an open replica index). Entries without
    a name (a Required error) or with another scope (ignored by Grove) make none. Raises
    ``TooManyFamilies`` past ``MAX_FAMILIES``, having made no more than that many.

    The places are walked here by their templates rather than through ``owners.places``: only an
    owner with entries costs anything, which on every review matters (the tests hold the two walks
    to the same names)."""
    template = spec.template
    pcs_count = counts(spec, Level.PODCLIQUESET, 0)
    found = owner_patterns((PCS_NAME,), template.resource_sharing or (), PCS_ENTRIES, pcs_count)
    if pcs_count <= 0:
        return _bounded(found)
    i = OpenIndex(pcs_count)
    standalone, members = clique_templates(spec)
    cliques = template.cliques
    for c in standalone:
        if cliques[c].resource_sharing:
            found += _bounded(_clique_patterns(spec, counts, c, (PCS_NAME, i)), found)
    for g, group in enumerate(template.pod_clique_scaling_groups):
        parts = naming.scaling_group_parts(PCS_NAME, i, group.name)
        group_count = counts(spec, Level.SCALING_GROUP, g)
        if group.resource_sharing:
            found += _bounded(owner_patterns(parts, group.resource_sharing, entries_source(Level.SCALING_GROUP, g), group_count), found)
        if group_count > 0:
            j = OpenIndex(group_count)
            for c in members[g]:
                if cliques[c].resource_sharing:
                    found += _bounded(_clique_patterns(spec, counts, c, (*parts, j)), found)
    return found


def _clique_patterns(spec: PodCliqueSetSpec, counts: Counts, c: int, owner: Parts) -> list[NamePattern]:
    """The patterns of the PodCliques of clique template ``c``, whose names follow ``owner`` (the
    parts of the PodCliqueSet's replica, or of a scaling group's)."""
    clique = spec.template.cliques[c]
    entries = clique.resource_sharing or ()
    return owner_patterns((*owner, clique.name), entries, entries_source(Level.CLIQUE, c), counts(spec, Level.CLIQUE, c))


MAX_FAMILIES = 10_000
"""Families of claim names made at most: a spec of thousands of scaling groups each listing
thousands of cliques makes millions (each a PodClique's claims)."""


class TooManyFamilies(Exception):
    """The spec makes more than ``MAX_FAMILIES`` families: their names are not walked."""


def _bounded(more: list[NamePattern], found: Sequence[NamePattern] = ()) -> list[NamePattern]:
    """``more``, when it and ``found`` stay within ``MAX_FAMILIES``."""
    if len(found) + len(more) > MAX_FAMILIES:
        raise TooManyFamilies
    return more


def owner_patterns(owner: Parts, entries: Entries, list_path: str, replicas: int) -> list[NamePattern]:
    """The patterns of the claims of the owners named ``owner`` (parts after the PodCliqueSet's
    name) at ``replicas``, their ``entries`` at ``list_path``: its AllReplicas entries, then its
    PerReplica entries with an open replica index (none at 0 replicas). A scale (``scaling``) asks
    for one owner at a new count."""
    head, extra = _first_name(owner)
    every: list[NamePattern] = []
    each: list[NamePattern] = []
    replica = OpenIndex(replicas)
    each_extra = extra + (naming.extra_digits(replicas) if replicas > 10 else 0)  # and the replica index
    for i, entry in enumerate(entries):
        name, scope = entry.name, entry.scope
        if not name:
            continue
        if scope == ALL_REPLICAS:
            first = naming.claim_name(head, name, None)
            every.append(NamePattern(list_path, i, owner, name, None, first, len(first.encode()) + extra))
        elif scope == PER_REPLICA and replicas > 0:
            first = naming.claim_name(head, name, 0)
            each.append(NamePattern(list_path, i, owner, name, replica, first, len(first.encode()) + each_extra))
    return every + each


def _first_name(owner: Parts) -> tuple[str, int]:
    """The owner's first name (open indices 0), which its claims' first names follow by
    ``naming.claim_name``, and the digits its open indices may add: found once for all its entries."""
    first: list[str] = []
    extra = 0
    for part in owner:
        if type(part) is str:
            first.append(part)
        elif type(part) is OpenIndex:
            first.append("0")
            if part.size > 10:  # an index below 10 adds no digit
                extra += naming.extra_digits(part.size)
        else:
            first.append(str(part))
    return "-".join(first), extra


@dataclass(frozen=True, slots=True)
class PlannedSize:
    """How much a spec makes at the replica counts Grove starts with (``owners.planned_owners``)."""

    owners: int
    claims: int
    pods: int


def planned_size(spec: PodCliqueSetSpec) -> PlannedSize:
    """The owners, claims and pods of ``planned_owners``, counted without listing them: the owners
    are walked with open indices, and each place stands for as many owners as its open indices
    take values. Costs as much as ``name_patterns``, whatever the replica counts."""
    owners = claims = pods = 0
    for place in places(spec, _open):
        copies = math.prod(i.size for i in (place.pcs_replica, place.group_replica) if i is not None)
        replicas = planned_replicas(spec, place.level, place.template)
        owners += copies
        claims += copies * claims_needed(level_entries(spec, place.level, place.template), replicas)
        if place.level is Level.CLIQUE:
            pods += copies * replicas
    return PlannedSize(owners, claims, pods)


def first_longer_than(pattern: NamePattern, limit: int, prefix: str = "") -> str | None:
    """The first name of the family (indices in creation order) longer than ``limit`` bytes, each
    name following ``prefix`` (the PodCliqueSet's name, for a spec's patterns)."""
    shortest = len((prefix + pattern.name()).encode())
    extra = [naming.extra_digits(n) for n in pattern.open_sizes()]
    if shortest + sum(extra) <= limit:
        return None
    chosen, used = [], 0
    for t in range(len(extra)):
        digits = max(0, limit - shortest - used - sum(extra[t + 1 :]) + 1)
        chosen.append(0 if digits == 0 else 10**digits)
        used += digits
    return prefix + pattern.name(chosen)
