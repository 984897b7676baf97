"""Which claims must exist and which must go, per owner (BEHAVIOUR.md §4.5 to §4.8, §9 items
12 and 22): the one description the reconciler acts on, checked on Grove's end-to-end workload."""

from __future__ import annotations

from typing import Any

import pytest

from core.sharing.oracle import claim_names, stale_claims
from core.sharing.test_patterns import SEEDS, random_spec
from core.workload import grove_pod, workload_pcs_raw
from webhook.core.model.meta import OwnerReference
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.model.podcliqueset import PodClique, PodCliqueScalingGroup, read_podclique, read_scaling_group
from webhook.core.sharing.desired import claim_count, desired_claims
from webhook.core.sharing.owners import Owner, live_owners, planned_owners
from webhook.core.sharing.patterns import PlannedSize, planned_size
from webhook.core.sharing.placement import clique_identity, index_below

BASE = {
    "app.kubernetes.io/managed-by": "grove-operator",
    "app.kubernetes.io/part-of": "rs-test",
    "app.kubernetes.io/component": "resource-claim",
}
PCS_INDEX = "grove.io/podcliqueset-replica-index"
PCSG = "grove.io/podcliquescalinggroup"
PCSG_INDEX = "grove.io/podcliquescalinggroup-replica-index"
PCLQ = "grove.io/podclique"
POD_INDEX = "grove.io/podclique-pod-index"
DELETING = "2025-01-01T00:00:00Z"


def pcs(replicas: int = 1, **template: Any) -> PodCliqueSet:
    raw = workload_pcs_raw(replicas)
    raw["metadata"]["uid"] = "pcs-uid"
    raw["spec"]["template"].update(template)
    return read_podcliqueset(raw)


def group(name: str, pcs_replica: str = "0", replicas: int = 2, deleting: bool = False) -> PodCliqueScalingGroup:
    metadata: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"{name}-uid"}
    metadata["labels"] = {"app.kubernetes.io/part-of": "rs-test", PCS_INDEX: pcs_replica}
    if deleting:
        metadata["deletionTimestamp"] = DELETING
    return read_scaling_group({"metadata": metadata, "spec": {"replicas": replicas}})


def clique(name: str, labels: dict[str, str], replicas: int = 1, deleting: bool = False) -> PodClique:
    metadata: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"{name}-uid", "labels": labels}
    if deleting:
        metadata["deletionTimestamp"] = DELETING
    return read_podclique({"metadata": metadata, "spec": {"replicas": replicas}})


def worker_a(i: int = 0, **labels: str) -> dict[str, str]:
    return {"app.kubernetes.io/part-of": "rs-test", PCS_INDEX: str(i), **labels}


def worker_b(i: int, j: int) -> dict[str, str]:
    return {**worker_a(i), PCSG: f"rs-test-{i}-sga", PCSG_INDEX: str(j)}


def summary(owner: Owner) -> tuple[str, str, str, int, str, list[str]]:
    names = [e.name for e in owner.entries]
    return owner.level.kind, owner.name, owner.uid, owner.replicas, owner.source, names


# --- owners (§4.7: one PCS, each PCSG object, each PodClique object) -----------------------------


def test_owners_are_the_podcliqueset_and_its_scaling_group_and_podclique_objects() -> None:
    groups = [group("rs-test-0-sga")]
    cliques = [
        clique("rs-test-0-worker-a", worker_a(), replicas=2),
        clique("rs-test-0-sga-0-worker-b", worker_b(0, 0)),
        clique("rs-test-0-sga-1-worker-b", worker_b(0, 1)),
    ]
    assert [summary(o) for o in live_owners(pcs(), groups, cliques)] == [
        (
            "PodCliqueSet", "rs-test", "pcs-uid", 1,
            "spec.template.resourceSharing", ["int-tpl5", "ext-tpl", "int-tpl", "int-tpl7"],
        ),
        (
            "PodCliqueScalingGroup", "rs-test-0-sga", "rs-test-0-sga-uid", 2,
            "spec.template.podCliqueScalingGroups[0].resourceSharing", ["int-tpl2", "int-tpl3", "int-tpl8"],
        ),
        (
            "PodClique", "rs-test-0-worker-a", "rs-test-0-worker-a-uid", 2,
            "spec.template.cliques[0].resourceSharing", ["int-tpl4", "ext-ns-tpl"],
        ),
        (
            "PodClique", "rs-test-0-sga-0-worker-b", "rs-test-0-sga-0-worker-b-uid", 1,
            "spec.template.cliques[1].resourceSharing", ["int-tpl6"],
        ),
        (
            "PodClique", "rs-test-0-sga-1-worker-b", "rs-test-0-sga-1-worker-b-uid", 1,
            "spec.template.cliques[1].resourceSharing", ["int-tpl6"],
        ),
    ]


SKIPPED = [
    ("scaling group being deleted", [group("rs-test-0-sga", deleting=True)], [], []),
    ("PodClique being deleted", [], [clique("rs-test-0-worker-a", worker_a(), deleting=True)], []),
    (
        "PodClique whose clique template is gone",
        [],
        [clique("rs-test-0-worker-z", worker_a())],
        [("rs-test-0-worker-z", 'PodClique template "worker-z" not found in PCS spec')],
    ),
    (
        "PodClique its labels do not place",
        [],
        [clique("rs-test-0-worker-a", {"app.kubernetes.io/part-of": "rs-test"})],
        [
            (
                "rs-test-0-worker-a",
                "failed to get PodClique name: missing label grove.io/podcliqueset-replica-index on PodClique: "
                "default/rs-test-0-worker-a",
            )
        ],
    ),
    (
        "scaling group whose config is gone",
        [group("rs-test-0-sgz")],
        [],
        [
            (
                "rs-test-0-sgz",
                "no matching PodCliqueScalingGroupConfig in PodCliqueSet default/rs-test for PodCliqueScalingGroup "
                "default/rs-test-0-sgz",
            )
        ],
    ),
    (
        "scaling group with an unreadable replica index",
        [group("rs-test-0-sga", pcs_replica="x")],
        [],
        [("rs-test-0-sga", 'invalid label grove.io/podcliqueset-replica-index: strconv.Atoi: parsing "x": invalid syntax')],
    ),
]


@pytest.mark.parametrize(("groups", "cliques", "reported"), [c[1:] for c in SKIPPED], ids=[c[0] for c in SKIPPED])
def test_objects_that_are_not_owners_are_skipped_and_the_unplaceable_reported(
    groups: list[PodCliqueScalingGroup], cliques: list[PodClique], reported: list[tuple[str, str]]
) -> None:
    errors: list[tuple[str, str]] = []
    owners = live_owners(pcs(), groups, cliques, on_error=lambda name, message: errors.append((name, message)))
    assert [o.name for o in owners] == ["rs-test"]
    assert errors == reported


# --- desired claims (§3.2, §4.5, §4.6, §4.7) --------------------------------------------------------


def claims(owned: Owner) -> list[tuple[str, dict[str, str], OwnerReference, str]]:
    return [(c.name, c.labels, c.owner, c.source) for c in desired_claims(owned)]


PCS_OWNER = OwnerReference.controlling("PodCliqueSet", "rs-test", "pcs-uid")
ENTRY = "spec.template.resourceSharing[{}]"


def test_podcliqueset_claims_all_replicas_first_then_per_replica_filters_ignored() -> None:
    """§9 item 12: ``int-tpl`` (filtered to worker-a) and ``int-tpl7`` (to sga) exist regardless."""
    owner = live_owners((pcs(replicas=2)), [], [])[0]
    assert claims(owner) == [
        ("rs-test-all-int-tpl5", BASE, PCS_OWNER, ENTRY.format(0)),
        ("rs-test-all-int-tpl7", BASE, PCS_OWNER, ENTRY.format(3)),
        ("rs-test-0-ext-tpl", {**BASE, PCS_INDEX: "0"}, PCS_OWNER, ENTRY.format(1)),
        ("rs-test-0-int-tpl", {**BASE, PCS_INDEX: "0"}, PCS_OWNER, ENTRY.format(2)),
        ("rs-test-1-ext-tpl", {**BASE, PCS_INDEX: "1"}, PCS_OWNER, ENTRY.format(1)),
        ("rs-test-1-int-tpl", {**BASE, PCS_INDEX: "1"}, PCS_OWNER, ENTRY.format(2)),
    ]
    assert OwnerReference.controlling("PodCliqueSet", "rs-test", "pcs-uid").api_version == "grove.io/v1alpha1"


def test_zero_replicas_keep_only_all_replicas_claims() -> None:
    """§9 item 22."""
    owner = live_owners((pcs(replicas=0)), [], [])[0]
    assert [c.name for c in desired_claims(owner)] == ["rs-test-all-int-tpl5", "rs-test-all-int-tpl7"]


def test_an_entry_of_another_scope_makes_no_claim() -> None:
    """§4.7 item 4: only reachable past the CRD and the webhook."""
    sharing = [{"name": "a", "scope": "PerPod"}, {"name": "b", "scope": "AllReplicas"}, {"name": "c", "scope": ""}]
    owner = live_owners((pcs(resourceSharing=sharing)), [], [])[0]
    assert [c.name for c in desired_claims(owner)] == ["rs-test-all-b"]


def test_scaling_group_and_podclique_claims_carry_their_own_label_and_no_podcliqueset_index() -> None:
    groups = [group("rs-test-0-sga", replicas=2)]
    cliques = [clique("rs-test-0-worker-a", worker_a(), replicas=2)]
    _, sga, worker = live_owners(pcs(), groups, cliques)
    group_owner = OwnerReference.controlling("PodCliqueScalingGroup", "rs-test-0-sga", "rs-test-0-sga-uid")
    on_group = {**BASE, PCSG: "rs-test-0-sga"}
    group_entry = "spec.template.podCliqueScalingGroups[0].resourceSharing[{}]"
    assert claims(sga) == [
        ("rs-test-0-sga-all-int-tpl2", on_group, group_owner, group_entry.format(0)),
        ("rs-test-0-sga-all-int-tpl8", on_group, group_owner, group_entry.format(2)),
        ("rs-test-0-sga-0-int-tpl3", {**on_group, PCSG_INDEX: "0"}, group_owner, group_entry.format(1)),
        ("rs-test-0-sga-1-int-tpl3", {**on_group, PCSG_INDEX: "1"}, group_owner, group_entry.format(1)),
    ]
    clique_owner = OwnerReference.controlling("PodClique", "rs-test-0-worker-a", "rs-test-0-worker-a-uid")
    on_clique = {**BASE, PCLQ: "rs-test-0-worker-a"}
    clique_entry = "spec.template.cliques[0].resourceSharing[{}]"
    assert claims(worker) == [
        ("rs-test-0-worker-a-all-ext-ns-tpl", on_clique, clique_owner, clique_entry.format(1)),
        ("rs-test-0-worker-a-0-int-tpl4", {**on_clique, POD_INDEX: "0"}, clique_owner, clique_entry.format(0)),
        ("rs-test-0-worker-a-1-int-tpl4", {**on_clique, POD_INDEX: "1"}, clique_owner, clique_entry.format(0)),
    ]


def test_podclique_claims_take_part_of_from_the_podclique() -> None:
    """§4.5: Grove labels a PodClique's claims with the PodClique's own ``part-of``."""
    other = read_podcliqueset({**workload_pcs_raw(), "metadata": {**workload_pcs_raw()["metadata"], "name": "renamed"}})
    labels = {"app.kubernetes.io/part-of": "rs-test", PCS_INDEX: "0"}
    worker = live_owners((other), [], [clique("rs-test-0-worker-a", labels)])[1]
    assert {c.labels["app.kubernetes.io/part-of"] for c in desired_claims(worker)} == {"rs-test"}


# --- stale claims (§4.8) ----------------------------------------------------------------------------

EXISTING = [
    ("rs-test-all-int-tpl5", BASE),
    ("rs-test-0-ext-tpl", {**BASE, PCS_INDEX: "0"}),
    ("rs-test-1-ext-tpl", {**BASE, PCS_INDEX: "1"}),
    ("rs-test-7-gone-tpl", {**BASE, PCS_INDEX: "7"}),
    ("rs-test-01-ext-tpl", {**BASE, PCS_INDEX: "01"}),
    ("rs-test-0-sga-all-int-tpl2", {**BASE, PCSG: "rs-test-0-sga"}),
    ("rs-test-0-sga-0-int-tpl3", {**BASE, PCSG: "rs-test-0-sga", PCSG_INDEX: "0"}),
    ("rs-test-0-sga-5-int-tpl3", {**BASE, PCSG: "rs-test-0-sga", PCSG_INDEX: "5"}),
    ("rs-test-1-sga-5-int-tpl3", {**BASE, PCSG: "rs-test-1-sga", PCSG_INDEX: "5"}),
    ("rs-test-0-worker-a-all-ext-ns-tpl", {**BASE, PCLQ: "rs-test-0-worker-a"}),
    ("rs-test-0-worker-a-0-int-tpl4", {**BASE, PCLQ: "rs-test-0-worker-a", POD_INDEX: "0"}),
    ("rs-test-0-worker-a-3-int-tpl4", {**BASE, PCLQ: "rs-test-0-worker-a", POD_INDEX: "3"}),
    ("rs-test-0-worker-ab-3-int-tpl4", {**BASE, PCLQ: "rs-test-0-worker-ab", POD_INDEX: "3"}),
    ("other-1-ext-tpl", {**BASE, "app.kubernetes.io/part-of": "other", PCS_INDEX: "1"}),
    ("handmade-1", {PCS_INDEX: "1", "app.kubernetes.io/part-of": "rs-test"}),
]

STALE = [
    (
        "PodCliqueSet: index not in 0..N-1 (compared as text, as a selector does); never another level's",
        ("PodCliqueSet", 1),
        ["rs-test-1-ext-tpl", "rs-test-7-gone-tpl", "rs-test-01-ext-tpl"],
    ),
    (
        "PodCliqueSet at zero replicas: every PerReplica claim, no AllReplicas one",
        ("PodCliqueSet", 0),
        ["rs-test-0-ext-tpl", "rs-test-1-ext-tpl", "rs-test-7-gone-tpl", "rs-test-01-ext-tpl"],
    ),
    ("scaling group: its own group only", ("PodCliqueScalingGroup", 2), ["rs-test-0-sga-5-int-tpl3"]),
    (
        "scaling group at zero replicas",
        ("PodCliqueScalingGroup", 0),
        ["rs-test-0-sga-0-int-tpl3", "rs-test-0-sga-5-int-tpl3"],
    ),
    ("PodClique: exactly its own name", ("PodClique", 1), ["rs-test-0-worker-a-3-int-tpl4"]),
    ("PodClique at four replicas: nothing", ("PodClique", 4), []),
]


def owner_of_kind(kind: str, replicas: int) -> Owner:
    owners = live_owners(
        (pcs(replicas=replicas if kind == "PodCliqueSet" else 1)),
        [group("rs-test-0-sga", replicas=replicas)],
        [clique("rs-test-0-worker-a", worker_a(), replicas=replicas)],
    )
    return next(o for o in owners if o.level.kind == kind)


@pytest.mark.parametrize(("owner", "expected"), [c[1:] for c in STALE], ids=[c[0] for c in STALE])
def test_stale_claims_follow_groves_selectors(owner: tuple[str, int], expected: list[str]) -> None:
    assert stale_claims(owner_of_kind(*owner), EXISTING) == expected


def test_an_owner_that_shares_nothing_cleans_up_nothing() -> None:
    """§4.7 item 1: no entries, no cleanup, even at zero replicas."""
    owner = live_owners((pcs(replicas=0, resourceSharing=[])), [], [])[0]
    assert stale_claims(owner, EXISTING) == []


# --- any replica count ------------------------------------------------------------------------------


def test_claims_are_counted_and_made_by_position_without_listing_the_replicas() -> None:
    """A million replicas: the count is arithmetic, and any stretch of positions is made on its
    own, in Grove's order (AllReplicas entries first, then replica by replica)."""
    owner = live_owners((pcs(replicas=1_000_000)), [], [])[0]
    assert claim_count(owner) == 2 + 2 * 1_000_000
    assert [c.name for c in desired_claims(owner, 0, 3)] == ["rs-test-all-int-tpl5", "rs-test-all-int-tpl7", "rs-test-0-ext-tpl"]
    assert [c.name for c in desired_claims(owner, 2_000_000, 2_000_005)] == [
        "rs-test-999999-ext-tpl", "rs-test-999999-int-tpl",
    ]
    assert [(c.replica, c.labels[PCS_INDEX]) for c in desired_claims(owner, 5, 6)] == [(1, "1")]


@pytest.mark.parametrize("replicas", [0, 1, 3], ids=lambda r: f"{r} replicas")
def test_positions_give_the_same_claims_as_the_whole_list(replicas: int) -> None:
    groups = [group("rs-test-0-sga", replicas=replicas)]
    for owner in live_owners((pcs(replicas=replicas)), groups, [clique("rs-test-0-worker-a", worker_a(), replicas)]):
        whole = claims(owner)
        assert len(whole) == claim_count(owner)
        pieces = [c for start in range(0, len(whole), 2) for c in desired_claims(owner, start, start + 2)]
        assert [(c.name, c.labels, c.owner, c.source) for c in pieces] == whole


def test_negative_replicas_are_kept_as_given_and_need_no_per_replica_claim() -> None:
    """The reconciler refuses such an owner (a Warning Event, nothing deleted); here it is only data."""
    owner = live_owners((pcs(replicas=-3)), [], [clique("rs-test-0-worker-a", worker_a(), replicas=-1)])
    assert [(o.name, o.replicas, claim_count(o)) for o in owner] == [("rs-test", -3, 2), ("rs-test-0-worker-a", -1, 1)]


INDICES = [
    ("0", 1, True), ("0", 0, False), ("9", 10, True), ("10", 10, False), ("01", 5, False), ("+1", 5, False),
    (" 1", 5, False), ("-1", 5, False), ("", 5, False), ("\u0661", 5, False), ("9" * 5000, 10**6, False),
    ("999999", 10**6, True),
]


@pytest.mark.parametrize(("value", "replicas", "below"), INDICES, ids=[f"{v[:8]!r} of {n}" for v, n, _ in INDICES])
def test_a_replica_index_is_valid_only_as_grove_spells_it(value: str, replicas: int, below: bool) -> None:
    """``notin (0,1,...)`` compares text: only the plain decimal spelling of 0..N-1 is a valid
    index, whatever its length (a 5,000-digit value is rejected before ``int`` reads it)."""
    assert index_below(value, replicas) is below


# --- the spec's owners ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [pytest.param(s, id=f"seed-{s}") for s in (0, 1)])
def test_planned_owners_make_the_claims_an_independent_reading_of_the_spec_makes(seed: int) -> None:
    for s in range(seed, len(SEEDS), 8):
        spec = random_spec(s)
        names: dict[str, set[str]] = {}
        for owned in planned_owners(read_podcliqueset(spec)):
            for claim in desired_claims(owned):
                if claim.entry.name:
                    names.setdefault(claim.source, set()).add(claim.name)
        assert names == claim_names(spec), s


def test_planned_owners_of_groves_workload_start_with_the_templates_replicas() -> None:
    owners = [(o.level.kind, o.name, o.replicas) for o in planned_owners((pcs(replicas=2)))]
    assert owners == [
        ("PodCliqueSet", "rs-test", 2),
        ("PodClique", "rs-test-0-worker-a", 1),
        ("PodCliqueScalingGroup", "rs-test-0-sga", 2),
        ("PodClique", "rs-test-0-sga-0-worker-b", 1),
        ("PodClique", "rs-test-0-sga-1-worker-b", 1),
        ("PodClique", "rs-test-1-worker-a", 1),
        ("PodCliqueScalingGroup", "rs-test-1-sga", 2),
        ("PodClique", "rs-test-1-sga-0-worker-b", 1),
        ("PodClique", "rs-test-1-sga-1-worker-b", 1),
    ]


@pytest.mark.parametrize("seed", [pytest.param(s, id=f"seed-{s}") for s in (0, 1)])
def test_planned_size_counts_what_the_planned_owners_list(seed: int) -> None:
    for s in range(seed, len(SEEDS), 8):
        sharing = read_podcliqueset((random_spec(s)))
        owners = list(planned_owners(sharing))
        pods = sum(o.replicas for o in owners if o.identity is not None)
        assert planned_size(sharing.spec) == PlannedSize(len(owners), sum(map(claim_count, owners)), pods), s


def test_planned_podcliques_carry_the_identity_their_pods_labels_give() -> None:
    raw = workload_pcs_raw(2)
    sharing = read_podcliqueset((raw))
    for owned in planned_owners(sharing):
        if owned.identity is None:
            assert owned.level.kind != "PodClique"
            continue
        assert owned.identity.clique_fqn == owned.name
        group = owned.identity.scaling_group_fqn or None
        clique = owned.identity.clique_name
        pod = grove_pod(raw, owned.identity.pcs_replica, clique, 0, group and "sga", owned.identity.scaling_group_replica)
        labels = pod["metadata"]["labels"]
        assert clique_identity("default", "rs-test", labels["grove.io/podclique"], labels) == owned.identity
