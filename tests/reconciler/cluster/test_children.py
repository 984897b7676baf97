"""Which cached scaling groups and PodCliques are current children of a PodCliqueSet: only those
the PodCliqueSet (or their live scaling group) controls now and still needs. The rest are left to
Grove and the garbage collector, with their claims."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.model.podcliqueset import PodClique, PodCliqueScalingGroup, read_podclique, read_scaling_group
from webhook.reconciler.cluster import current_children

PCS_INDEX = "grove.io/podcliqueset-replica-index"
PCSG = "grove.io/podcliquescalinggroup"
PCSG_INDEX = "grove.io/podcliquescalinggroup-replica-index"
DELETING = "2025-01-01T00:00:00Z"


def metadata(name: str, owner_uid: str, labels: dict[str, str], deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "uid": f"{name}-uid",
        "labels": {"app.kubernetes.io/part-of": "rs-test", **labels},
        "ownerReferences": [
            {"apiVersion": "grove.io/v1alpha1", "kind": "X", "name": "x", "uid": owner_uid, "controller": True}
        ],
    }
    if deleting:
        meta["deletionTimestamp"] = DELETING
    return meta


def pcs(replicas: int = 1) -> PodCliqueSet:
    meta = {"name": "rs-test", "namespace": "default", "uid": "pcs"}
    return read_podcliqueset({"metadata": meta, "spec": {"replicas": replicas}})


def group(i: int = 0, replicas: int = 2, owner: str = "pcs", deleting: bool = False) -> PodCliqueScalingGroup:
    meta = metadata(f"rs-test-{i}-sga", owner, {PCS_INDEX: str(i)}, deleting)
    return read_scaling_group({"metadata": meta, "spec": {"replicas": replicas}})


def standalone(i: int = 0, owner: str = "pcs") -> PodClique:
    meta = metadata(f"rs-test-{i}-worker-a", owner, {PCS_INDEX: str(i)})
    return read_podclique({"metadata": meta, "spec": {"replicas": 1}})


def member(i: int = 0, j: int = 0, owner: str = "") -> PodClique:
    labels = {PCS_INDEX: str(i), PCSG: f"rs-test-{i}-sga", PCSG_INDEX: str(j)}
    meta = metadata(f"rs-test-{i}-sga-{j}-worker-b", owner or f"rs-test-{i}-sga-uid", labels)
    return read_podclique({"metadata": meta, "spec": {"replicas": 1}})


Case = tuple[Callable[[], PodCliqueSet], list[PodCliqueScalingGroup], list[PodClique], list[str]]
CASES: list[tuple[str, Case]] = [
    (
        "all current",
        (
            pcs,
            [group()],
            [standalone(), member(j=0), member(j=1)],
            ["rs-test-0-sga", "rs-test-0-worker-a", "rs-test-0-sga-0-worker-b", "rs-test-0-sga-1-worker-b"],
        ),
    ),
    ("PodCliqueSet at zero replicas: none", (lambda: pcs(0), [group()], [standalone(), member()], [])),
    ("replica removed from the PodCliqueSet", (pcs, [group(1)], [standalone(1), member(1)], [])),
    ("replica removed from the scaling group", (pcs, [group(replicas=1)], [member(j=1)], ["rs-test-0-sga"])),
    (
        "children of an earlier PodCliqueSet of the same name",
        (pcs, [group(owner="old-pcs")], [standalone(owner="old-pcs"), member()], []),
    ),
    ("member of a scaling group not cached", (pcs, [], [member()], [])),
    ("member controlled by an earlier scaling group", (pcs, [group()], [member(owner="old-sga")], ["rs-test-0-sga"])),
    ("scaling group being deleted, and its members", (pcs, [group(deleting=True)], [member()], [])),
]


@pytest.mark.parametrize("case", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_current_children(case: Case) -> None:
    make_pcs, groups, cliques, expected = case
    live_groups, live_cliques = current_children(make_pcs(), groups, cliques)
    assert [o.metadata.name for o in [*live_groups, *live_cliques]] == expected
