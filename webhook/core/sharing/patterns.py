"""Every claim name a PodCliqueSet spec will produce, as patterns with the replica indices left open.

One entry on one kind of owner makes a family of names that differ only in their indices: listing
it would cost as much as the replica counts (``spec.replicas`` alone may be two billion), a pattern
as much as one name. An index is printed between hyphens with no leading zero, so whether two
families share a name is a segment-by-segment question. A spec's patterns leave out the
PodCliqueSet's name (their first segment is empty): what they share does not depend on it. Which
families share a name is searched for within a bound (``shared_names``)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations, islice
from typing import NamedTuple

from webhook.core.model.podcliqueset import ALL_REPLICAS, PER_REPLICA, Entries, PodCliqueSetSpec
from webhook.core.sharing import naming
from webhook.core.sharing.desired import claims_needed
from webhook.core.sharing.naming import OpenIndex, Parts
from webhook.core.sharing.owners import PCS_ENTRIES, Counts, Level, clique_templates, entries_source, level_entries, places, planned_replicas

Segment = str | int
"""A literal segment, or the size ``n`` of an open index (any of ``0 .. n-1``)."""
PCS_NAME = ""
"""Where the PodCliqueSet's name stands in a spec's patterns."""
MAX_FAMILIES = 10_000
"""Families made at most: thousands of scaling groups listing thousands of cliques make millions."""
WORK_LIMIT = 20_000
"""Patterns compared plus pairs found, at most, in one ``shared_names``: a few hundred for real
specs, half a million pairs (a warning each) for a spec of a thousand cliques of one name."""


class NamePattern(NamedTuple):
    """The names one entry, at ``position`` in the list at ``list_path``, makes on one kind of owner."""

    list_path: str
    position: int
    owner: Parts
    """The owners' names' parts after the PodCliqueSet's name."""
    entry: str
    replica: OpenIndex | None
    """The owner's replicas, for a PerReplica entry (None for AllReplicas)."""
    first: str
    """The family's first name (every open index 0)."""
    longest: int
    """Bytes the family's longest name takes."""

    @property
    def source(self) -> str:
        """The entry's field path, e.g. ``spec.template.cliques[0].resourceSharing[1]``."""
        return f"{self.list_path}[{self.position}]"

    @property
    def parts(self) -> Parts:
        return naming.claim_parts(self.owner, self.entry, self.replica)

    @property
    def segments(self) -> tuple[Segment, ...]:
        """Parts split at ``-``, open indices as sizes (made when asked: most differ in shape)."""
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
        """The segments with each open index and each number that could be one blanked: families
        can only share a name when their shapes are equal. Read off the first name."""
        shape: list[str | None] = []
        for s in self.first.split("-"):
            shape.append(None if s == "0" or (s.isdigit() and s.isascii() and s[0] != "0") else s)
        return tuple(shape)


def name_patterns(spec: PodCliqueSetSpec, counts: Counts = planned_replicas) -> list[NamePattern]:
    """The patterns of every claim the spec makes at the replica counts ``counts`` gives, in Grove's
    order; ``TooManyFamilies`` past ``MAX_FAMILIES``. The owners are walked by template, not through
    ``places``, so that only an owner with entries costs anything (tests hold the two alike)."""
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
    """The patterns of the PodCliques of clique template ``c``, whose names follow ``owner``."""
    clique = spec.template.cliques[c]
    entries = clique.resource_sharing or ()
    return owner_patterns((*owner, clique.name), entries, entries_source(Level.CLIQUE, c), counts(spec, Level.CLIQUE, c))


class TooManyFamilies(Exception):
    """The spec makes more than ``MAX_FAMILIES`` families: their names are not walked."""


def _bounded(more: list[NamePattern], found: Sequence[NamePattern] = ()) -> list[NamePattern]:
    if len(found) + len(more) > MAX_FAMILIES:
        raise TooManyFamilies
    return more


def owner_patterns(owner: Parts, entries: Entries, list_path: str, replicas: int) -> list[NamePattern]:
    """The patterns of the claims of owners named ``owner`` at ``replicas``: AllReplicas first."""
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
    """The owner's first name and the digits its open indices may add, once for all its entries."""
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
    owners: int
    claims: int
    pods: int


def planned_size(spec: PodCliqueSetSpec) -> PlannedSize:
    """The owners, claims and pods ``planned_owners`` makes, counted at the cost of ``name_patterns``
    whatever the replica counts: a place with open indices stands for as many as they take."""
    owners = claims = pods = 0
    for place in places(spec, lambda count: (OpenIndex(count),) if count > 0 else ()):
        copies = math.prod(i.size for i in (place.pcs_replica, place.group_replica) if i is not None)
        replicas = planned_replicas(spec, place.level, place.template)
        owners += copies
        claims += copies * claims_needed(level_entries(spec, place.level, place.template), replicas)
        if place.level is Level.CLIQUE:
            pods += copies * replicas
    return PlannedSize(owners, claims, pods)


def first_longer_than(pattern: NamePattern, limit: int, prefix: str = "") -> str | None:
    """The family's first name longer than ``limit`` bytes after ``prefix`` (the PodCliqueSet's)."""
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
    """Every two patterns whose families share a name, with one such name, within ``work_limit``:
    grouped by shape, then split on each numeric position (a number meets indices reaching it)."""
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
        reaching = [k for k in open_members if _reaches(segments[k][pos], value)]
        _meet(segments, fixed + reaching, rest, found, work)


def _reaches(size: Segment, value: str) -> bool:
    """Whether an index of ``size`` values takes ``value``, measured first: it may be huge."""
    assert isinstance(size, int), "an open index"
    return len(value) <= len(str(size)) and int(value) < size


def _shared_name(a: tuple[Segment, ...], b: tuple[Segment, ...]) -> str:
    """The first name two meeting families share: literals where either has one, else index 0."""
    return "-".join(x if isinstance(x, str) else y if isinstance(y, str) else "0" for x, y in zip(a, b, strict=True))
