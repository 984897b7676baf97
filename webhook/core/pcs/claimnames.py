"""Claim names pods cannot use, and names two owners both generate (DECISIONS.md §3, BEHAVIOUR.md §9
items 1 and 8): the checks beyond Grove on the names the claim reconciler would create.

The names are those the claim reconciler would create at the most replicas the spec allows, taken
as families (``sharing.patterns``), so that the cost does not grow with the replica counts and no
collision is missed. Of the usual spec only the families' first names are made
(``sharing.firstnames``): they tell that no two families share a name, and that all end as labels.
What a spec's families say (``name_families``) does not depend on the PodCliqueSet's name, which
every claim name starts with; the warnings (``name_warnings``) put it in front. Warnings come in
a stable order: invalid names (one per entry, its first invalid name), then collisions (one per
pair of entries, the first shared name).
"""

from __future__ import annotations

import re

import msgspec

from webhook.core.gocompat import gojson
from webhook.core.model.podcliqueset import PodCliqueSetSpec
from webhook.core.sharing.firstnames import first_names
from webhook.core.sharing.patterns import NamePattern, first_longer_than, name_patterns
from webhook.core.sharing.scaling import largest
from webhook.core.sharing.sharednames import apart, may_share, shared_names

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_LABEL_START = re.compile(r"[a-z0-9][-a-z0-9]*")
_LABEL_END = re.compile(r"-[-a-z0-9]*[a-z0-9]")
_LABEL_ENDS = re.compile(r"-[-a-z0-9]*[a-z0-9](?:\n-[-a-z0-9]*[a-z0-9])*")
MAX_LABEL_LENGTH = 63
TOO_LONG = f"must be no more than {MAX_LABEL_LENGTH} characters"
BAD_CHARACTERS = (
    "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
)

MAX_COLLISIONS = 100
"""Collision warnings listed at most; one more says the list is cut. The API server keeps only the
first few kilobytes of a response's warnings anyway, and a spec of many cliques of one name would
otherwise be answered with a warning per pair of them."""
INCOMPLETE = (
    f"spec.template: not every claim-name collision is listed (more than {MAX_COLLISIONS} pairs of "
    "entries, or too many similar names to compare them all)"
)


def dns1123_label_problem(name: str) -> str | None:
    """Why a pod could not use ``name`` as a claim name, or None. Length counts bytes, as Go does."""
    if len(name.encode()) > MAX_LABEL_LENGTH:
        return TOO_LONG
    if not _DNS1123_LABEL.fullmatch(name):
        return BAD_CHARACTERS
    return None


class Collision(msgspec.Struct, frozen=True, gc=False):
    later: str
    """The field path of the later entry."""
    earlier: str
    shared: str
    """The first name both generate, after the PodCliqueSet's name."""


class NameFamilies:
    """A spec's claim names, whatever the PodCliqueSet is called: what its families' first names
    tell, and the families themselves (``listed``), made when first needed and then kept with
    the spec's checks."""

    __slots__ = ("spec", "label_ends", "collisions", "complete", "longest", "_listed")

    def __init__(
        self,
        spec: PodCliqueSetSpec,
        label_ends: bool,
        collisions: list[Collision],
        complete: bool,
        longest: int,
        patterns: list[NamePattern] | None = None,
    ) -> None:
        self.spec = spec
        """The spec at the most replicas each owner can reach (``scaling.largest``)."""
        self.label_ends = label_ends
        """Every family's names end as a DNS-1123 label does after a name that starts as one."""
        self.collisions = collisions
        self.complete = complete
        """Every collision is listed."""
        self.longest = longest
        """Bytes the longest name of any family takes (0 without families)."""
        self._listed = None if patterns is None else self._with_ends(patterns)

    def all_labels(self, pcs_name: str) -> bool:
        """Whether every name is a DNS-1123 label after ``pcs_name``, told without looking at each
        family: the usual case, a PodCliqueSet name that starts a label and families whose names
        end one, none too long."""
        return (
            self.longest <= MAX_LABEL_LENGTH - len(pcs_name.encode())
            and self.label_ends
            and _LABEL_START.fullmatch(pcs_name) is not None
        )

    def listed(self) -> list[tuple[NamePattern, bool]]:
        """The families, each with whether its names end as labels: listed by ``name_families``
        when their first names did not tell the collisions, else when a PodCliqueSet's name first
        leaves some of them too little room (``name_warnings``)."""
        if self._listed is None:
            self._listed = self._with_ends(name_patterns(self.spec))
        return self._listed

    def _with_ends(self, patterns: list[NamePattern]) -> list[tuple[NamePattern, bool]]:
        ends = [True] * len(patterns) if self.label_ends else _label_ends([p.first for p in patterns])
        return list(zip(patterns, ends, strict=True))


def name_families(spec: PodCliqueSetSpec) -> NameFamilies:
    """The families at the most replicas each owner can reach (``scaling.largest``): an autoscaler
    scaling a clique from 9 to 10 replicas must not make its names invalid. Their first names tell
    whether they end as labels and, in the usual spec, that no two share a name; only otherwise
    are they listed to find the collisions."""
    most = largest(spec)
    firsts, longest = first_names(most)
    if apart(firsts):
        return NameFamilies(most, all(_label_ends(firsts)), [], True, longest)
    patterns = name_patterns(most)
    collisions, complete = _collisions(patterns) if may_share(patterns) else ([], True)
    return NameFamilies(most, all(_label_ends(firsts)), collisions, complete, longest, patterns)


def _label_ends(firsts: list[str]) -> list[bool]:
    """Per first name: it ends as a DNS-1123 label does. Matched in one piece, each on a line of
    its own, and one by one when that piece does not match or a name holds a line break itself
    (it could otherwise pass as two names that end as labels)."""
    joined = "\n".join(firsts)
    if joined.count("\n") == len(firsts) - 1 and _LABEL_ENDS.fullmatch(joined):
        return [True] * len(firsts)
    return [_LABEL_END.fullmatch(first) is not None for first in firsts]


def name_warnings(pcs_name: str, families: NameFamilies) -> list[str]:
    """The warnings about the claim names of PodCliqueSet ``pcs_name`` with these families."""
    collisions = [
        f"{c.later}: claim name {gojson.quote(pcs_name + c.shared)} is also generated by {c.earlier}; "
        "the second owner cannot own it and a pod referencing it twice is rejected"
        for c in families.collisions
    ]
    invalid = [] if families.all_labels(pcs_name) else _invalid_names(pcs_name, families)
    return [*invalid, *collisions, *([] if families.complete else [INCOMPLETE])]


def _invalid_names(pcs_name: str, families: NameFamilies) -> list[str]:
    """One warning per entry whose names include one that is not a DNS-1123 label. A family whose
    longest name fits after a PodCliqueSet name that starts a label, and whose names end one, has
    none: only the others are looked at name by name."""
    room = MAX_LABEL_LENGTH - len(pcs_name.encode())
    starts = bool(_LABEL_START.fullmatch(pcs_name))
    warnings: dict[str, str] = {}
    for pattern, ends in families.listed():
        if (starts and ends and pattern.longest <= room) or pattern.source in warnings:
            continue
        invalid = first_invalid(pcs_name, pattern)
        if invalid:
            name, problem = invalid
            warnings[pattern.source] = (
                f"{pattern.source}: claim name {gojson.quote(name)} is not a valid DNS-1123 label ({problem}); "
                "pods that reference it will be rejected"
            )
    return list(warnings.values())


def first_invalid(pcs_name: str, pattern: NamePattern) -> tuple[str, str] | None:
    """The first name of a family that is not a DNS-1123 label, with the reason. Indices are digits,
    which never make a name invalid except by its length, so the first name (all indices 0) shows
    every other problem."""
    first = pcs_name + pattern.name()
    problem = dns1123_label_problem(first)
    if problem:
        return first, problem
    longer = first_longer_than(pattern, MAX_LABEL_LENGTH, pcs_name)
    return (longer, TOO_LONG) if longer else None


def _collisions(patterns: list[NamePattern]) -> tuple[list[Collision], bool]:
    """Names two entries of different lists both generate. Within one list a repeated name is
    already Grove's Duplicate error (so only its first entry is compared with other lists), and
    different names in one list never produce the same claim."""
    firsts: dict[tuple[str, tuple[str | int, ...]], NamePattern] = {}
    for pattern in patterns:
        firsts.setdefault((pattern.list_path, pattern.segments), pattern)
    distinct = list(firsts.values())
    shared = shared_names(distinct)
    found: dict[tuple[str, str], Collision] = {}
    for a, b, name in shared:
        earlier, later = distinct[a], distinct[b]
        if earlier.list_path == later.list_path or (earlier.source, later.source) in found:
            continue
        if len(found) == MAX_COLLISIONS:
            return list(found.values()), False
        found[(earlier.source, later.source)] = Collision(later.source, earlier.source, name)
    return list(found.values()), shared.complete
