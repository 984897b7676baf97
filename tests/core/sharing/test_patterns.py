"""Claim-name families against the claims themselves: for small specs every family is listed out and
compared with the names an independent reading of the spec gives (``oracle``), so the patterns (which do
not depend on replica counts) are exactly those names, and the shared names they find are exactly
the names two families have in common."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

from core.sharing.oracle import claim_names
from core.sharing.specs import random_spec
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.sharing.naming import OpenIndex
from webhook.core.sharing.patterns import NamePattern, first_longer_than, may_share, name_patterns, shared_names


def pattern_of(source: str, segments: tuple[str | int, ...]) -> NamePattern:
    """A pattern of these segments (the owner's, then ``all`` or the size of the replica index,
    then the entry's name), its first name and longest length found by their definitions."""
    first = "-".join(s if isinstance(s, str) else "0" for s in segments)
    longest = "-".join(s if isinstance(s, str) else str(s - 1) for s in segments)
    *owner, replica, entry = segments
    assert isinstance(entry, str) and (replica == "all" or isinstance(replica, int)), segments
    parts = tuple(OpenIndex(s) if isinstance(s, int) else s for s in owner)
    list_path, index = source[:-1].rsplit("[", 1)
    open_replica = None if isinstance(replica, str) else OpenIndex(replica)
    return NamePattern(list_path, int(index), parts, entry, open_replica, first, len(longest.encode()))


def listed(pattern: NamePattern) -> set[str]:
    return {pattern.name(indices) for indices in itertools.product(*(range(n) for n in pattern.open_sizes()))}


SEEDS = range(400)


@pytest.mark.parametrize("seed", [pytest.param(s, id=f"seed-{s}") for s in (0, 1, 2, 3)])
def test_families_are_the_reconcilers_names(seed: int) -> None:
    for s in range(seed, len(SEEDS), 4):
        spec = random_spec(s)
        families: dict[str, set[str]] = {}
        pcs = read_podcliqueset(spec)
        for pattern in name_patterns(pcs.spec):
            families.setdefault(pattern.source, set()).update(pcs.name + name for name in listed(pattern))
        assert families == claim_names(spec), s


def test_shared_names_are_exactly_the_common_names() -> None:
    found_any = 0
    for seed in SEEDS:
        pcs = read_podcliqueset(random_spec(seed))
        patterns = name_patterns(pcs.spec)
        families = [listed(p) for p in patterns]
        expected = {(a, b) for a, b in itertools.combinations(range(len(patterns)), 2) if families[a] & families[b]}
        found = {}
        for a, b, name in shared_names(patterns):
            assert a < b
            assert name in families[a] and name in families[b], (seed, name)
            found[(a, b)] = name
        assert set(found) == expected, seed
        found_any += len(found)
    assert found_any > 100, "the random specs should produce collisions"


def test_first_name_and_longest_length_are_those_of_the_listed_names() -> None:
    for seed in range(0, len(SEEDS), 4):
        for pattern in name_patterns(read_podcliqueset(random_spec(seed)).spec):
            names = listed(pattern)
            first = "-".join(s if isinstance(s, str) else "0" for s in pattern.segments)
            assert (pattern.first, pattern.longest) == (first, max(len(n.encode()) for n in names)), (seed, pattern)
            assert first in names


def _odd_entries(raw: dict[str, Any], seed: int) -> dict[str, Any]:
    """The spec with, for some seeds, an entry of another scope and one without a name (neither
    makes claims) and a clique at 11 replicas (the fewest whose indices reach two digits) or more."""
    template = raw["spec"]["template"]
    lists = [template["resourceSharing"]] + [o["resourceSharing"] for o in template["cliques"] + template["podCliqueScalingGroups"]]
    entries = [e for entries in lists for e in entries]
    if seed % 3 == 0 and entries:
        entries[0]["scope"] = "Sometimes"
        entries[-1]["name"] = ""
    if seed % 5 < 2:  # 11 replicas: the first to reach an index of two digits
        template["cliques"][0]["spec"]["replicas"] = 11 if seed % 5 == 0 else 100 + seed
    return raw


def _one_each(level: str, replicas: int) -> dict[str, Any]:
    """A PerReplica entry at each level, the one of ``level`` with a long name and at ``replicas``
    (its claims the longest names): the PodCliqueSet's, a standalone clique's, a scaling group's
    (and its member clique's, at the group's replicas)."""
    def owner(name: str) -> dict[str, Any]:
        entry = {"name": "long-entry-name-on-" + name if name == level else "e", "scope": "PerReplica"}
        return {"name": name, "replicas": replicas if name == level else 1, "resourceSharing": [entry]}

    pcs, clique, group, member = owner("pcs"), owner("clique"), owner("group"), owner("member")
    member["replicas"] = 1
    if level == "member":
        group["replicas"] = replicas
    return {"metadata": {"name": "p"}, "spec": {"replicas": pcs["replicas"], "template": {
        "resourceSharing": pcs["resourceSharing"],
        "cliques": [
            {"name": "clique", "spec": {"replicas": clique["replicas"]}, "resourceSharing": clique["resourceSharing"]},
            {"name": "member", "spec": {"replicas": 1}, "resourceSharing": member["resourceSharing"]},
        ],
        "podCliqueScalingGroups": [{**group, "cliqueNames": ["member"]}],
    }}}


@pytest.mark.parametrize("replicas", [10, 11])
@pytest.mark.parametrize("level", ["pcs", "clique", "group", "member"])
def test_the_longest_name_counts_an_index_of_two_digits_from_11_replicas(level: str, replicas: int) -> None:
    spec = read_podcliqueset(_one_each(level, replicas)).spec
    longest = max(len(name) for p in name_patterns(spec) for name in listed(p))
    assert longest == max(p.longest for p in name_patterns(spec))
    assert longest == len(max(listed(next(p for p in name_patterns(spec) if "long" in p.entry)), key=len))


def test_families_of_distinct_shapes_share_no_name() -> None:
    """``may_share`` lets the collision search be skipped: when it says no, no two listed families
    have a name in common (and the random specs give both answers)."""
    answers = set()
    for seed in SEEDS:
        patterns = name_patterns(read_podcliqueset(random_spec(seed)).spec)
        answers.add(may_share(patterns))
        if not may_share(patterns):
            families = [listed(p) for p in patterns]
            assert not any(a & b for a, b in itertools.combinations(families, 2)), seed
    assert answers == {True, False}


@pytest.mark.parametrize(
    ("segments", "limit", "expected"),
    [
        pytest.param(("p", 5, "x"), 5, None, id="never-too-long"),
        pytest.param(("p", 5, "xyz"), 5, "p-0-xyz", id="first-already-too-long"),
        pytest.param(("p", 100, "x"), 5, "p-10-x", id="first-index-with-two-digits"),
        pytest.param(("p", 1000, "q", 1000, "x"), 10, "p-0-q-100-x", id="outer-index-kept-small"),
        pytest.param(("p", 1000, "q", 1000, "x"), 11, "p-10-q-100-x", id="outer-index-grows-as-little-as-needed"),
        pytest.param(("p", 1000, "q", 10, "x"), 10, "p-100-q-0-x", id="outer-index-grows-when-the-inner-cannot"),
    ],
)
def test_first_name_longer_than_a_limit(segments: tuple[str | int, ...], limit: int, expected: str | None) -> None:
    pattern = pattern_of("spec.template.resourceSharing[0]", segments)
    first = next(
        (pattern.name(i) for i in itertools.product(*(range(n) for n in pattern.open_sizes())) if len(pattern.name(i)) > limit),
        None,
    )
    assert first_longer_than(pattern, limit) == first == expected


def test_cost_does_not_grow_with_replicas() -> None:
    spec = random_spec(7)
    spec["spec"]["replicas"] = 2**31 - 1
    for clique in spec["spec"]["template"]["cliques"]:
        clique["spec"]["replicas"] = 2**31 - 1
    for group in spec["spec"]["template"]["podCliqueScalingGroups"]:
        group["replicas"] = 2**31 - 1
    pcs = read_podcliqueset(spec)
    started = time.perf_counter()
    patterns = name_patterns(pcs.spec)
    list(shared_names(patterns))
    for pattern in patterns:
        first_longer_than(pattern, 63)
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize(
    ("size", "literal", "shared"),
    [
        pytest.param(3, "2", True, id="literal-within-the-open-index"),
        pytest.param(3, "3", False, id="literal-just-beyond"),
        pytest.param(2**31 - 1, "9" * 5000, False, id="literal-of-5000-digits-beyond-any-index"),
    ],
)
def test_an_index_meets_a_literal_number_of_any_length(size: int, literal: str, shared: bool) -> None:
    """A numeric name segment longer than ``int`` reads (4,300 digits) failed the validating webhook
    with code 500 when it was compared with an open index."""
    patterns = [
        pattern_of("spec.template.resourceSharing[0]", ("p", size, "all", "x")),
        pattern_of("spec.template.resourceSharing[1]", ("p", literal, "all", "x")),
        pattern_of("spec.template.resourceSharing[2]", ("p", "9" * 5000, "all", "x")),
    ]
    found = {(a, b): name for a, b, name in shared_names(patterns)}
    assert ((0, 1) in found) == shared
    assert found.get((1, 2)) == (f"p-{literal}-all-x" if literal == "9" * 5000 else None)


def test_a_search_beyond_the_work_limit_stops_and_says_so() -> None:
    patterns = [pattern_of(f"spec.template.cliques[{c}].resourceSharing[0]", ("p", 3, "x")) for c in range(1000)]
    started = time.perf_counter()
    cut = shared_names(patterns, work_limit=5000)
    assert time.perf_counter() - started < 0.5
    assert not cut.complete
    assert 0 < len(cut.pairs) <= 5000
    assert cut.pairs[0] == (0, 1, "p-0-x")
    whole = shared_names(patterns[:50])
    assert whole.complete and len(whole.pairs) == 50 * 49 // 2
