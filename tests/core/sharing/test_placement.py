"""Placing a PodClique (or a pod of it) from Grove's labels (BEHAVIOUR.md §5.1): Go's
``strconv.Atoi`` and the odd names and labels Grove's code meets before any template lookup."""

from __future__ import annotations

import pytest

from core.workload import workload_pcs
from webhook.core.gocompat.gojson import atoi
from webhook.core.sharing.placement import (
    CliqueIdentity,
    IdentityError,
    clique_identity,
    clique_of,
    scaling_group_of,
)

SYNTAX = 'strconv.Atoi: parsing "{}": invalid syntax'
RANGE = 'strconv.Atoi: parsing "{}": value out of range'

ATOI = [
    ("zero", "0", 0),
    ("plus sign", "+7", 7),
    ("minus sign", "-3", -3),
    ("leading zeros", "007", 7),
    ("largest int64", "9223372036854775807", 2**63 - 1),
    ("smallest int64", "-9223372036854775808", -(2**63)),
    ("empty", "", SYNTAX.format("")),
    ("sign alone", "+", SYNTAX.format("+")),
    ("two signs", "--5", SYNTAX.format("--5")),
    ("leading space", " 1", SYNTAX.format(" 1")),
    ("trailing newline", "1\n", 'strconv.Atoi: parsing "1\\n": invalid syntax'),
    ("underscore", "1_000", SYNTAX.format("1_000")),
    ("hexadecimal", "0x10", SYNTAX.format("0x10")),
    ("non-ASCII digit", "\u0663", SYNTAX.format("\u0663")),
    ("int64 overflow", "9223372036854775808", RANGE.format("9223372036854775808")),
    ("int64 underflow", "-9223372036854775809", RANGE.format("-9223372036854775809")),
    ("twenty digits", "99999999999999999999", RANGE.format("99999999999999999999")),
    # Go's slow path reads digit by digit: an overflow met before a bad character is reported as such.
    ("overflow, then a letter", "99999999999999999999x", RANGE.format("99999999999999999999x")),
    ("uint64 overflow at the last digit, then a letter", "18446744073709551616x", RANGE.format("18446744073709551616x")),
    ("uint64 maximum, then a letter", "18446744073709551615x", SYNTAX.format("18446744073709551615x")),
    ("int64 overflow that fits uint64, then a letter", "9223372036854775808x", SYNTAX.format("9223372036854775808x")),
    ("a letter, then an overflow", "x99999999999999999999", SYNTAX.format("x99999999999999999999")),
    ("negative overflow, then a letter", "-99999999999999999999x", RANGE.format("-99999999999999999999x")),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in ATOI], ids=[c[0] for c in ATOI])
def test_atoi_is_gos(text: str, expected: int | str) -> None:
    if isinstance(expected, int):
        assert atoi(text) == expected
    else:
        with pytest.raises(ValueError) as err:
            atoi(text)
        assert str(err.value) == expected


STANDALONE = {"app.kubernetes.io/part-of": "rs-test", "grove.io/podcliqueset-replica-index": "0"}
MEMBER = {
    **STANDALONE,
    "grove.io/podcliquescalinggroup": "rs-test-0-sga",
    "grove.io/podcliquescalinggroup-replica-index": "1",
}
FORMAT = "PodClique FQN is not in the expected format of <pcs-name>-<pcs-replica-index>-<pclq-template-name>"
REPLICA = "error extracting PCS replica index for PodClique default/"
NAME = "failed to get PodClique name: "

PLACEMENTS: list[tuple[str, str, str, dict[str, str], CliqueIdentity | str]] = [
    (
        "standalone",
        "rs-test",
        "rs-test-0-worker-a",
        STANDALONE,
        CliqueIdentity("default", "rs-test", 0, "rs-test-0-worker-a", "worker-a"),
    ),
    (
        "member",
        "rs-test",
        "rs-test-0-sga-1-worker-b",
        MEMBER,
        CliqueIdentity("default", "rs-test", 0, "rs-test-0-sga-1-worker-b", "worker-b", "rs-test-0-sga", 1),
    ),
    (
        "PodCliqueSet whose name has a replica-like suffix",
        "a-0",
        "a-0-0-w",
        {"app.kubernetes.io/part-of": "a-0", "grove.io/podcliqueset-replica-index": "0"},
        CliqueIdentity("default", "a-0", 0, "a-0-0-w", "w"),
    ),
    (
        "PodCliqueSet name a shorter prefix of the clique's",
        "rs",
        "rs-test-0-worker-a",
        {**STANDALONE, "app.kubernetes.io/part-of": "rs"},
        REPLICA + 'rs-test-0-worker-a: strconv.Atoi: parsing "test": invalid syntax',
    ),
    (
        "PodCliqueSet name longer than the clique's",
        "rs-test-long",
        "rs-test",
        STANDALONE,
        f"{REPLICA}rs-test: {FORMAT}: rs-test",
    ),
    ("nothing after the replica index", "rs-test", "rs-test-0", STANDALONE, f"{REPLICA}rs-test-0: {FORMAT}: rs-test-0"),
    (
        "empty replica index",
        "rs-test",
        "rs-test--worker-a",
        STANDALONE,
        REPLICA + 'rs-test--worker-a: strconv.Atoi: parsing "": invalid syntax',
    ),
    (
        "replica index out of range",
        "rs-test",
        "rs-test-99999999999999999999-worker-a",
        STANDALONE,
        REPLICA + 'rs-test-99999999999999999999-worker-a: strconv.Atoi: parsing "99999999999999999999": value out of range',
    ),
    (
        "signed replica index: the prefix is rebuilt from the number",
        "rs-test",
        "rs-test-+0-worker-a",
        {**STANDALONE, "grove.io/podcliqueset-replica-index": "+0"},
        NAME + 'FQN "rs-test-+0-worker-a" does not have expected prefix "rs-test-0-"',
    ),
    (
        "replica-index label overflows before a letter",
        "rs-test",
        "rs-test-0-worker-a",
        {**STANDALONE, "grove.io/podcliqueset-replica-index": "99999999999999999999x"},
        NAME
        + "invalid label grove.io/podcliqueset-replica-index on PodClique: default/rs-test-0-worker-a: "
        + RANGE.format("99999999999999999999x"),
    ),
    (
        "empty scaling-group label still asks for the group's replica index",
        "rs-test",
        "rs-test-0-worker-a",
        {**STANDALONE, "grove.io/podcliquescalinggroup": ""},
        NAME + "missing label grove.io/podcliquescalinggroup-replica-index on PodClique: default/rs-test-0-worker-a",
    ),
    (
        "empty scaling-group label makes the prefix '-<j>-'",
        "rs-test",
        "rs-test-0-worker-a",
        {**STANDALONE, "grove.io/podcliquescalinggroup": "", "grove.io/podcliquescalinggroup-replica-index": "0"},
        NAME + 'FQN "rs-test-0-worker-a" does not have expected prefix "-0-"',
    ),
    (
        "negative scaling-group replica index is Grove's to accept",
        "rs-test",
        "rs-test-0-sga--1-worker-b",
        {**MEMBER, "grove.io/podcliquescalinggroup-replica-index": "-1"},
        CliqueIdentity("default", "rs-test", 0, "rs-test-0-sga--1-worker-b", "worker-b", "rs-test-0-sga", -1),
    ),
]


@pytest.mark.parametrize(
    ("pcs", "clique", "labels", "expected"), [c[1:] for c in PLACEMENTS], ids=[c[0] for c in PLACEMENTS]
)
def test_clique_identity(pcs: str, clique: str, labels: dict[str, str], expected: CliqueIdentity | str) -> None:
    if isinstance(expected, CliqueIdentity):
        assert clique_identity("default", pcs, clique, labels) == expected
    else:
        with pytest.raises(IdentityError) as err:
            clique_identity("default", pcs, clique, labels)
        assert str(err.value) == expected


def test_an_empty_namespace_prints_as_gos_object_key() -> None:
    """Go prints a ``client.ObjectKey`` as ``<namespace>/<name>``, so an empty namespace leaves the slash."""
    with pytest.raises(IdentityError) as err:
        clique_identity("", "rs-test", "rs-test-0-worker-a", {"app.kubernetes.io/part-of": "rs-test"})
    assert str(err.value) == NAME + "missing label grove.io/podcliqueset-replica-index on PodClique: /rs-test-0-worker-a"


@pytest.mark.parametrize(
    ("clique_fqn", "labels", "message"),
    [
        pytest.param(
            "rs-test-0-worker-c",
            {"app.kubernetes.io/part-of": "rs-test", "grove.io/podcliqueset-replica-index": "0"},
            'PodClique template "worker-c" not found in PCS spec',
            id="no-such-clique",
        ),
        pytest.param(
            "rs-test-0-sgz-0-worker-b",
            {"grove.io/podcliquescalinggroup": "rs-test-0-sgz", "grove.io/podcliquescalinggroup-replica-index": "0"},
            'PCSG label "rs-test-0-sgz" present on PodClique "rs-test-0-sgz-0-worker-b" but no matching '
            'PodCliqueScalingGroupConfig found in PCS "rs-test"',
            id="no-such-scaling-group",
        ),
    ],
)
def test_a_podclique_its_podcliqueset_has_no_template_for_is_refused_with_groves_text(
    clique_fqn: str, labels: dict[str, str], message: str
) -> None:
    pcs = (workload_pcs())
    identity = clique_identity("default", "rs-test", clique_fqn, labels)
    with pytest.raises(IdentityError) as refused:
        clique_of(pcs, identity)
        scaling_group_of(pcs, identity)
    assert str(refused.value) == message
