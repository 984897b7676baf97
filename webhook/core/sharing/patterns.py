"""Every claim name a PodCliqueSet spec will produce, as patterns with the replica indices left open.

Grove names a claim ``<owner>-all-<entry>`` or ``<owner>-<index>-<entry>`` and owners carry indices
of their own (``<pcs>-<i>-<group>-<j>-<clique>``), so one entry on one kind of owner produces a
family of names that differ only in their indices. Listing the family would cost as much as the
replica counts (``spec.replicas`` alone may be two billion); a pattern costs as much as the name.

A pattern is the name split at ``-``: literal segments, and open segments standing for any
decimal index in ``range(n)``. Indices are always printed between two hyphens with no leading
zero, so two names are equal exactly when their segments are, which makes "can these two
families share a name" a segment-by-segment question. The owners and their replica counts are
those of ``owners.planned_owners``, walked with open indices.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import combinations, islice

from webhook.core.model.podcliqueset import Scope
from webhook.core.model.projection import PodCliqueSetSharing
from webhook.core.sharing.desired import claim_count
from webhook.core.sharing.owners import Level, SharingOwner, planned_owners

_OPEN = "\udc00"
"""Marks an open index inside a generated name: a lone surrogate, which no decoded JSON or YAML
string can contain, so it never meets a user's name."""
_MARKER = re.compile(f"{_OPEN}([0-9]+){_OPEN}")
_NUMERIC_SEGMENT = re.compile(f"(?:^|(?<=-))(?:{_OPEN}[0-9]+{_OPEN}|0|[1-9][0-9]*)(?=-|$)")

Segment = str | int
"""A literal segment, or the size ``n`` of an open index (any of ``0 .. n-1``)."""


class _Index(int):
    """An open index of ``size`` values: ``naming`` prints it as a marker instead of a number."""

    size: int

    def __new__(cls, size: int) -> _Index:
        index = super().__new__(cls, 0)
        index.size = size
        return index

    def __format__(self, spec: str) -> str:
        return f"{_OPEN}{self.size}{_OPEN}"


@dataclass(frozen=True, slots=True)
class NamePattern:
    """The names one entry produces on one kind of owner."""

    source: str
    """The entry's field path, e.g. ``spec.template.cliques[0].resourceSharing[1]``."""
    text: str
    """The name with a marker for each open index (``_OPEN<size>_OPEN``)."""

    @classmethod
    def of(cls, source: str, segments: Iterable[Segment]) -> NamePattern:
        return cls(source, "-".join(s if isinstance(s, str) else f"{_OPEN}{s}{_OPEN}" for s in segments))

    @property
    def list_path(self) -> str:
        return self.source.rsplit("[", 1)[0]

    @property
    def segments(self) -> tuple[Segment, ...]:
        return tuple(int(s[1:-1]) if s.startswith(_OPEN) else s for s in self.text.split("-"))

    def name(self, indices: Iterable[int] = ()) -> str:
        """One name of the family: open indices from ``indices`` in order (0 for those not given)."""
        given = iter(indices)
        return _MARKER.sub(lambda _: str(next(given, 0)), self.text)

    def first_name(self) -> str:
        """The family's first name: every index 0."""
        return _MARKER.sub("0", self.text)

    def open_sizes(self) -> list[int]:
        return [int(size) for size in _MARKER.findall(self.text)]

    def shape(self) -> str:
        """The name with every segment that is a number or an open index blanked: two families can
        only share a name when their shapes are equal."""
        return _NUMERIC_SEGMENT.sub(_OPEN, self.text)


def _open(count: int) -> tuple[_Index, ...]:
    """One open index standing for all of ``range(count)`` (none when the count is 0)."""
    return (_Index(count),) if count > 0 else ()


def name_patterns(pcs: PodCliqueSetSharing) -> list[NamePattern]:
    """The patterns of every claim the spec produces, in the order Grove creates them: the owners of
    ``owners.planned_owners`` walked with open indices, each owner's AllReplicas entries, then its
    PerReplica entries (with an open replica index). Entries without a name (a Required error) or
    with another scope (ignored by Grove) make none."""
    return [pattern for owned in planned_owners(pcs, _open) for pattern in owner_patterns(owned.owner, owned.replicas)]


def owner_patterns(owner: SharingOwner, replicas: int) -> list[NamePattern]:
    """The patterns of one owner's claims at ``replicas``: its AllReplicas entries, then its
    PerReplica entries with an open replica index."""
    patterns = []
    for scope, replica in ((Scope.ALL_REPLICAS, None), (Scope.PER_REPLICA, _Index(replicas))):
        if replica is not None and replicas <= 0:
            continue
        for i, entry in owner.in_scope(scope):
            if entry.name:
                patterns.append(NamePattern(f"{owner.source}[{i}]", owner.claim_name(entry, replica)))
    return patterns


def open_index(size: int) -> int:
    """An index standing for all of ``range(size)``, for an owner name made with ``naming``."""
    return _Index(size)


@dataclass(frozen=True, slots=True)
class PlannedSize:
    """How much a spec makes at the replica counts Grove starts with (``owners.planned_owners``)."""

    owners: int
    claims: int
    pods: int


def planned_size(pcs: PodCliqueSetSharing) -> PlannedSize:
    """The owners, claims and pods of ``planned_owners``, counted without listing them: the owners
    are walked with open indices, and each stands for as many owners as its open indices take
    values. Costs as much as ``name_patterns``, whatever the replica counts."""
    owners = claims = pods = 0
    for owned in planned_owners(pcs, _open):
        copies = math.prod(int(size) for size in _MARKER.findall(owned.owner.name))
        owners += copies
        claims += copies * claim_count(owned)
        if owned.owner.level is Level.CLIQUE:
            pods += copies * max(owned.replicas, 0)
    return PlannedSize(owners, claims, pods)


def first_longer_than(pattern: NamePattern, limit: int, first: str | None = None) -> str | None:
    """The first name of the family (indices in creation order) longer than ``limit`` bytes;
    ``first`` is the family's first name when the caller has it already."""
    shortest = len((first or pattern.first_name()).encode())
    extra = [len(str(n - 1)) - 1 for n in pattern.open_sizes()]
    if shortest + sum(extra) <= limit:
        return None
    chosen, used = [], 0
    for t in range(len(extra)):
        digits = max(0, limit - shortest - used - sum(extra[t + 1 :]) + 1)
        chosen.append(0 if digits == 0 else 10**digits)
        used += digits
    return pattern.name(chosen)


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


def shared_names(patterns: list[NamePattern], work_limit: int = WORK_LIMIT) -> SharedNames:
    """Every two patterns whose families share a name, with one such name, within ``work_limit``.

    Patterns can only meet where their literal segments agree, so they are first grouped by their
    segments with every number and open index blanked out; within a group the numeric positions
    are split one at a time (a literal number meets the open indices that reach it).
    """
    groups: dict[str, list[int]] = defaultdict(list)
    for k, p in enumerate(patterns):
        groups[p.shape()].append(k)
    found: set[tuple[int, int]] = set()
    segments: dict[int, tuple[Segment, ...]] = {}
    complete = True
    work = _Work(work_limit)
    try:
        for shape, members in groups.items():
            if len(members) > 1:
                segments.update((k, patterns[k].segments) for k in members)
                numeric = [pos for pos, s in enumerate(shape.split("-")) if s == _OPEN]
                _meet(segments, members, numeric, found, work)
    except _OutOfWork:
        complete = False
    pairs = [(a, b, _shared_name(segments[a], segments[b])) for a, b in sorted(found, key=lambda pair: (pair[1], pair[0]))]
    return SharedNames(pairs, complete)


def _meet(
    segments: dict[int, tuple[Segment, ...]], members: list[int], positions: list[int], found: set[tuple[int, int]], work: _Work
) -> None:
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
        reaching = [k for k in open_members if _reaches(int(segments[k][pos]), value)]
        _meet(segments, fixed + reaching, rest, found, work)


def _reaches(size: int, value: str) -> bool:
    """Whether an open index of ``size`` values takes the literal number ``value``. The literal is
    a user's name segment, possibly thousands of digits long (more than ``int`` reads), so it is
    measured first; with no leading zeros its length orders it against the size."""
    return len(value) <= len(str(size)) and int(value) < size


def _shared_name(a: tuple[Segment, ...], b: tuple[Segment, ...]) -> str:
    """The first name two meeting families share: literals where either has one, else index 0."""
    return "-".join(x if isinstance(x, str) else y if isinstance(y, str) else "0" for x, y in zip(a, b))
