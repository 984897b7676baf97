"""Every claim name a PodCliqueSet spec will produce, as patterns with the replica indices left open.

Grove names a claim ``<owner>-all-<entry>`` or ``<owner>-<index>-<entry>`` and owners carry indices
of their own (``<pcs>-<i>-<group>-<j>-<clique>``), so one entry on one kind of owner produces a
family of names that differ only in their indices. Listing the family would cost as much as the
replica counts (``spec.replicas`` alone may be two billion); a pattern costs as much as the name.

A pattern is the name split at ``-``: literal segments, and open segments standing for any
decimal index in ``range(n)``. Indices are always printed between two hyphens with no leading
zero, so two names are equal exactly when their segments are, which makes "can these two
families share a name" a segment-by-segment question. The owners are those of
``owners.places`` walked with open indices, named by ``naming``'s formulas.

Every claim name of a PodCliqueSet starts with the PodCliqueSet's name, so the patterns of a spec
leave it out: their first segment is empty, and a claim's name is the PodCliqueSet's name followed
by its pattern's name. Which names two families share, and how long they get, is then the same
whatever the PodCliqueSet is called.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, islice
from typing import NamedTuple

from webhook.core.model.podcliqueset import Entries, PodCliqueSetSpec, Scope
from webhook.core.sharing import naming
from webhook.core.sharing.desired import claims_needed
from webhook.core.sharing.naming import OpenIndex, Parts
from webhook.core.sharing.owners import Level, Place, entries_source, level_entries, places, planned_replicas

Segment = str | int
"""A literal segment, or the size ``n`` of an open index (any of ``0 .. n-1``)."""


class NamePattern(NamedTuple):
    """The names one entry produces on one kind of owner."""

    source: str
    """The entry's field path, e.g. ``spec.template.cliques[0].resourceSharing[1]``."""
    segments: tuple[Segment, ...]

    @property
    def list_path(self) -> str:
        return self.source.rsplit("[", 1)[0]

    def name(self, indices: tuple[int, ...] | list[int] = ()) -> str:
        """One name of the family: open indices from ``indices`` in order (0 for those not given)."""
        if not indices:
            return self.first_and_longest()[0]
        given = iter(indices)
        return "-".join([s if type(s) is str else str(next(given, 0)) for s in self.segments])

    def open_sizes(self) -> list[int]:
        return [s for s in self.segments if type(s) is int]

    def first_and_longest(self) -> tuple[str, int]:
        """The family's first name (every open index 0), and the bytes its longest name takes (the
        first with each open index at its largest)."""
        parts: list[str] = []
        extra = 0
        for s in self.segments:
            if isinstance(s, str):
                parts.append(s)
            else:
                parts.append("0")
                extra += len(str(s - 1)) - 1
        first = "-".join(parts)
        return first, len(first.encode()) + extra

    def shape(self) -> tuple[str | None, ...]:
        """The segments with every number and open index blanked (None): two families can only
        share a name when their shapes are equal."""
        shape: list[str | None] = []
        for s in self.segments:
            shape.append(s if type(s) is str and not (s.isdigit() and _is_number(s)) else None)
        return tuple(shape)


def _is_number(segment: str) -> bool:
    """Whether a literal segment is a number as an index is printed (no sign, no leading zero)."""
    return segment.isdigit() and segment.isascii() and (segment == "0" or segment[0] != "0")


def _open(count: int) -> tuple[OpenIndex, ...]:
    """One open index standing for all of ``range(count)`` (none when the count is 0)."""
    return (OpenIndex(count),) if count > 0 else ()


PCS_NAME = ""
"""Where the PodCliqueSet's name stands in a spec's patterns."""


def owner_parts(spec: PodCliqueSetSpec, place: Place[OpenIndex]) -> Parts:
    """The name of the owners at ``place``, by ``naming``'s formulas."""
    i = place.pcs_replica
    if place.level is Level.PODCLIQUESET or i is None:
        return (PCS_NAME,)
    if place.level is Level.SCALING_GROUP:
        return naming.scaling_group_parts(PCS_NAME, i, spec.scaling_groups[place.template].name)
    clique = spec.cliques[place.template].name
    if place.group_replica is None:
        return naming.standalone_clique_parts(PCS_NAME, i, clique)
    group = naming.scaling_group_parts(PCS_NAME, i, spec.scaling_groups[place.group].name)
    return naming.member_clique_parts(group, place.group_replica, clique)


def _segments(parts: Parts) -> tuple[Segment, ...]:
    segments: list[Segment] = []
    for part in parts:
        if type(part) is str:
            segments += part.split("-")
        else:
            segments.append(part.size if type(part) is OpenIndex else str(part))
    return tuple(segments)


def name_patterns(spec: PodCliqueSetSpec) -> list[NamePattern]:
    """The patterns of every claim the spec produces, in the order Grove creates them: the owners of
    ``owners.places`` walked with open indices, each owner's AllReplicas entries, then its
    PerReplica entries (with an open replica index). Entries without a name (a Required error) or
    with another scope (ignored by Grove) make none."""
    return [
        pattern
        for place in places(spec, _open)
        for pattern in owner_patterns(
            owner_parts(spec, place),
            level_entries(spec, place.level, place.template),
            entries_source(place.level, place.template),
            planned_replicas(spec, place),
        )
    ]


def owner_patterns(owner: Parts, entries: Entries, source: str, replicas: int) -> list[NamePattern]:
    """The patterns of the claims of the owners named ``owner`` (parts after the PodCliqueSet's
    name) at ``replicas``: its AllReplicas entries, then its PerReplica entries with an open replica
    index (none at 0 replicas). A scale (``scaling``) asks for one owner at a new count."""
    # The owner's segments once for all its entries: a claim's parts are the owner's followed by
    # those of the claim formula with no owner.
    head = _segments(owner)
    every: list[NamePattern] = []
    each: list[NamePattern] = []
    replica = OpenIndex(replicas)
    for i, entry in enumerate(entries):
        if not entry.name:
            continue
        if entry.scope == Scope.ALL_REPLICAS:
            every.append(NamePattern(f"{source}[{i}]", head + _segments(naming.claim_parts((), entry.name, None))))
        elif entry.scope == Scope.PER_REPLICA and replicas > 0:
            each.append(NamePattern(f"{source}[{i}]", head + _segments(naming.claim_parts((), entry.name, replica))))
    return every + each


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
        replicas = planned_replicas(spec, place)
        owners += copies
        claims += copies * claims_needed(level_entries(spec, place.level, place.template), replicas)
        if place.level is Level.CLIQUE:
            pods += copies * replicas
    return PlannedSize(owners, claims, pods)


def first_longer_than(pattern: NamePattern, limit: int, prefix: str = "") -> str | None:
    """The first name of the family (indices in creation order) longer than ``limit`` bytes, each
    name following ``prefix`` (the PodCliqueSet's name, for a spec's patterns)."""
    shortest = len((prefix + pattern.name()).encode())
    extra = [len(str(n - 1)) - 1 for n in pattern.open_sizes()]
    if shortest + sum(extra) <= limit:
        return None
    chosen, used = [], 0
    for t in range(len(extra)):
        digits = max(0, limit - shortest - used - sum(extra[t + 1 :]) + 1)
        chosen.append(0 if digits == 0 else 10**digits)
        used += digits
    return prefix + pattern.name(chosen)


WORK_LIMIT = 20_000
"""Patterns compared plus pairs found, at most, in one ``shared_names``: a few hundred for real
specs, while a spec of a thousand cliques of one name would produce half a million pairs (and a
warning each) from a body of less than a megabyte."""


class _OutOfWork(Exception):
    pass


@dataclass(slots=True)
class _Work:
    left: int

    def spend(self, units: int) -> None:
        self.left -= units
        if self.left < 0:
            raise _OutOfWork


@dataclass(frozen=True, slots=True)
class SharedNames:
    pairs: list[tuple[int, int, str]]
    """(earlier, later, a shared name), ordered by the later pattern, then the earlier."""
    complete: bool
    """False when the work limit stopped the search: ``pairs`` are some of the pairs, not all."""

    def __iter__(self) -> Iterator[tuple[int, int, str]]:
        return iter(self.pairs)


def may_share(patterns: list[NamePattern]) -> bool:
    """Whether two of the patterns have one shape: only then may their families share a name."""
    return len({p.shape() for p in patterns}) < len(patterns)


def shared_names(patterns: list[NamePattern], work_limit: int = WORK_LIMIT) -> SharedNames:
    """Every two patterns whose families share a name, with one such name, within ``work_limit``.

    Patterns can only meet where their literal segments agree, so they are first grouped by their
    shapes; within a group the numeric positions are split one at a time (a literal number meets
    the open indices that reach it).
    """
    groups: dict[tuple[str | None, ...], list[int]] = defaultdict(list)
    for k, p in enumerate(patterns):
        groups[p.shape()].append(k)
    found: set[tuple[int, int]] = set()
    work = _Work(work_limit)
    complete = True
    segments = [p.segments for p in patterns]
    try:
        for shape, members in groups.items():
            if len(members) > 1:
                numeric = [pos for pos, s in enumerate(shape) if s is None]
                _meet(segments, members, numeric, found, work)
    except _OutOfWork:
        complete = False
    ordered = sorted(found, key=lambda pair: (pair[1], pair[0]))
    pairs = [(a, b, _shared_name(patterns[a].segments, patterns[b].segments)) for a, b in ordered]
    return SharedNames(pairs, complete)


def _meet(segments: list[tuple[Segment, ...]], members: list[int], positions: list[int], found: set[tuple[int, int]], work: _Work) -> None:
    if len(members) < 2:
        return
    if not positions:
        # As many pairs as the work left allows, so that a search cut short still lists some.
        found.update(islice(combinations(sorted(members), 2), max(work.left, 0)))
        work.spend(len(members) * (len(members) - 1) // 2)
        return
    work.spend(len(members))
    pos, rest = positions[0], positions[1:]
    open_members: list[int] = []
    by_value: dict[str, list[int]] = defaultdict(list)
    for k in members:
        segment = segments[k][pos]
        if isinstance(segment, int):
            open_members.append(k)
        else:
            by_value[segment].append(k)
    _meet(segments, open_members, rest, found, work)
    for value, fixed in by_value.items():
        work.spend(len(open_members))
        reaching = [k for k in open_members if _reaches(_size(segments[k][pos]), value)]
        _meet(segments, fixed + reaching, rest, found, work)


def _size(segment: Segment) -> int:
    assert isinstance(segment, int), "an open index"
    return segment


def _reaches(size: int, value: str) -> bool:
    """Whether an open index of ``size`` values takes the literal number ``value``. The literal is
    a user's name segment, possibly thousands of digits long (more than ``int`` reads), so it is
    measured first; with no leading zeros its length orders it against the size."""
    return len(value) <= len(str(size)) and int(value) < size


def _shared_name(a: tuple[Segment, ...], b: tuple[Segment, ...]) -> str:
    """The first name two meeting families share: literals where either has one, else index 0."""
    return "-".join(x if isinstance(x, str) else y if isinstance(y, str) else "0" for x, y in zip(a, b, strict=True))
