"""Grove's end-to-end resource-sharing scenario (BEHAVIOUR.md §7.2) as data: each step, what the
user does, and every claim Grove has after it. The fake API server's test and the real control
plane's play the same steps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reconciler.expected import Claim, Expect
from reconciler.grove import GroveOperator

PCS = "rs-test"


def replica_claims(e: Expect, i: int, groups: dict[int, int], worker_a: int = 1) -> dict[str, Claim]:
    """Every claim of PodCliqueSet replica ``i``: its PerReplica PCS claims, worker-a's claims
    (``worker_a`` pods), scaling group ``rs-test-<i>-sga`` with ``groups[i]`` replicas and their
    worker-b cliques."""
    group = f"{PCS}-{i}-sga"
    claims = {
        f"{PCS}-{i}-ext-tpl": e.pcs_claim("ext-tpl", i),
        f"{PCS}-{i}-int-tpl": e.pcs_claim("int-tpl", i),
        f"{PCS}-{i}-worker-a-all-ext-ns-tpl": e.clique_claim(f"{PCS}-{i}-worker-a", "ext-ns-tpl"),
        f"{group}-all-int-tpl2": e.group_claim(group, "int-tpl2"),
        f"{group}-all-int-tpl8": e.group_claim(group, "int-tpl8"),
    }
    for k in range(worker_a):
        claims[f"{PCS}-{i}-worker-a-{k}-int-tpl4"] = e.clique_claim(f"{PCS}-{i}-worker-a", "int-tpl4", k)
    for j in range(groups[i]):
        claims[f"{group}-{j}-int-tpl3"] = e.group_claim(group, "int-tpl3", j)
        claims[f"{group}-{j}-worker-b-all-int-tpl6"] = e.clique_claim(f"{group}-{j}-worker-b", "int-tpl6")
    return claims


def expected(e: Expect, groups: dict[int, int], worker_a: int = 1) -> dict[str, Claim]:
    if not groups:
        return {}
    claims = {f"{PCS}-all-int-tpl5": e.pcs_claim("int-tpl5"), f"{PCS}-all-int-tpl7": e.pcs_claim("int-tpl7")}
    for i in groups:
        claims |= replica_claims(e, i, groups, worker_a if i == 0 else 1)
    return claims


@dataclass(frozen=True)
class Step:
    label: str
    act: Callable[[GroveOperator], None]
    groups: dict[int, int]
    """Scaling group replicas of each PodCliqueSet replica after the step."""
    worker_a: int
    count: int

    def want(self, e: Expect) -> dict[str, Claim]:
        return expected(e, self.groups, self.worker_a)


STEPS = (
    Step("A: the workload is applied and Grove builds its children", lambda g: g.sync(), {0: 2}, 1, 12),
    Step("B: scaling group 2 -> 1", lambda g: g.scale("podcliquescalinggroups", f"{PCS}-0-sga", 1), {0: 1}, 1, 10),
    Step("C: scaling group 1 -> 3", lambda g: g.scale("podcliquescalinggroups", f"{PCS}-0-sga", 3), {0: 3}, 1, 14),
    Step("D: PodClique worker-a 1 -> 2", lambda g: g.scale("podcliques", f"{PCS}-0-worker-a", 2), {0: 3}, 2, 15),
    Step("E: PodClique worker-a 2 -> 1", lambda g: g.scale("podcliques", f"{PCS}-0-worker-a", 1), {0: 3}, 1, 14),
    Step("F: PodCliqueSet 1 -> 2; the new replica's scaling group starts with the template's 2",
         lambda g: g.scale("podcliquesets", PCS, 2), {0: 3, 1: 2}, 1, 24),
    Step("G: PodCliqueSet 2 -> 1", lambda g: g.scale("podcliquesets", PCS, 1), {0: 3}, 1, 14),
    Step("I: the PodCliqueSet is deleted: the garbage collector takes every claim", lambda g: g.delete(), {}, 1, 0),
)
