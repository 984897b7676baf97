"""Which claim-name families share a name (``patterns``): the search behind the collision warnings."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, islice

from webhook.core.sharing.patterns import NamePattern, Segment

WORK_LIMIT = 20_000
"""Patterns compared plus pairs found, at most, in one ``shared_names``: a few hundred for real
specs, half a million pairs (a warning each) for a spec of a thousand cliques of one name."""


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
        reaching = [k for k in open_members if _reaches(_size(segments[k][pos]), value)]
        _meet(segments, fixed + reaching, rest, found, work)


def _size(segment: Segment) -> int:
    assert isinstance(segment, int), "an open index"
    return segment


def _reaches(size: int, value: str) -> bool:
    """Whether an index of ``size`` values takes ``value``, measured first: it may be huge."""
    return len(value) <= len(str(size)) and int(value) < size


def _shared_name(a: tuple[Segment, ...], b: tuple[Segment, ...]) -> str:
    """The first name two meeting families share: literals where either has one, else index 0."""
    return "-".join(x if isinstance(x, str) else y if isinstance(y, str) else "0" for x, y in zip(a, b, strict=True))
