"""Grove's end-to-end resource-sharing scenario (BEHAVIOUR.md §7.2), played against the fake
API server: after every step, exactly the claims Grove would have, with their full labels, one
controller reference to the current owner object, and the spec of their template."""

from __future__ import annotations

from collections.abc import Callable

from fakeapi import FakeApiServer, wait_until
from reconciler.conftest import Start
from reconciler.expected import Claim, Expect, actual
from reconciler.grove import GroveOperator, ext_ns_template, workload

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
    claims = {f"{PCS}-all-int-tpl5": e.pcs_claim("int-tpl5"), f"{PCS}-all-int-tpl7": e.pcs_claim("int-tpl7")}
    for i in groups:
        claims |= replica_claims(e, i, groups, worker_a if i == 0 else 1)
    return claims


def settle(api: FakeApiServer, want: Callable[[], dict[str, Claim]], count: int) -> None:
    """Wait until the claims are exactly as wanted, then compare (for a readable diff if not)."""
    try:
        wait_until(lambda: actual(api, part_of=PCS) == want(), timeout=10, message=f"{count} claims as expected")
    finally:
        assert actual(api, part_of=PCS) == want()
    assert len(want()) == count


def test_the_end_to_end_scenario(fake_api: FakeApiServer, start_reconciler: Start) -> None:
    start_reconciler().wait_active()
    ext_tpl, pcs = workload()
    fake_api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "rs-shared"}})
    fake_api.create(ext_ns_template())
    fake_api.create({**ext_tpl, "metadata": {**ext_tpl["metadata"], "namespace": "default"}})
    e = Expect(fake_api, PCS)

    # A: the workload is applied and Grove builds its children.
    grove = GroveOperator(fake_api, pcs)
    grove.sync()
    settle(fake_api, lambda: expected(e, {0: 2}), 12)
    assert sorted(actual(fake_api, part_of=PCS)) == sorted(
        [
            "rs-test-all-int-tpl5", "rs-test-0-ext-tpl", "rs-test-0-int-tpl", "rs-test-all-int-tpl7",
            "rs-test-0-worker-a-0-int-tpl4", "rs-test-0-worker-a-all-ext-ns-tpl",
            "rs-test-0-sga-all-int-tpl2", "rs-test-0-sga-0-int-tpl3", "rs-test-0-sga-1-int-tpl3",
            "rs-test-0-sga-all-int-tpl8",
            "rs-test-0-sga-0-worker-b-all-int-tpl6", "rs-test-0-sga-1-worker-b-all-int-tpl6",
        ]
    )
    claim_writes = fake_api.requests.matching(path_regex="/resourceclaims")
    assert sorted({r.method for r in claim_writes if r.method != "GET"}) == ["POST"]
    assert fake_api.requests.count("POST", "/resourceclaims$") == 12
    assert fake_api.requests.count("GET", "/resourceclaimtemplates/") == 2

    # B: scaling group 2 -> 1.
    grove.scale("podcliquescalinggroups", "rs-test-0-sga", 1)
    settle(fake_api, lambda: expected(e, {0: 1}), 10)

    # C: scaling group 1 -> 3.
    grove.scale("podcliquescalinggroups", "rs-test-0-sga", 3)
    settle(fake_api, lambda: expected(e, {0: 3}), 14)

    # D: PodClique worker-a 1 -> 2.
    grove.scale("podcliques", "rs-test-0-worker-a", 2)
    settle(fake_api, lambda: expected(e, {0: 3}, worker_a=2), 15)

    # E: PodClique worker-a 2 -> 1.
    grove.scale("podcliques", "rs-test-0-worker-a", 1)
    settle(fake_api, lambda: expected(e, {0: 3}), 14)

    # F: PodCliqueSet 1 -> 2; the new replica's scaling group starts with the template's 2.
    grove.scale("podcliquesets", PCS, 2)
    settle(fake_api, lambda: expected(e, {0: 3, 1: 2}), 24)

    # G: PodCliqueSet 2 -> 1.
    grove.scale("podcliquesets", PCS, 1)
    settle(fake_api, lambda: expected(e, {0: 3}), 14)

    # I: the PodCliqueSet is deleted: the garbage collector takes every claim; the templates stay.
    grove.delete()
    settle(fake_api, dict, 0)
    assert fake_api.get("resourceclaimtemplates", "default", "ext-tpl") is not None
    assert fake_api.get("resourceclaimtemplates", "rs-shared", "ext-ns-tpl") is not None
    # Only stale PerReplica claims were ever deleted by the reconciler, one by one, by UID.
    deletes = fake_api.requests.matching("DELETE", "/resourceclaims")
    assert deletes and all(not r.path.endswith("/resourceclaims") for r in deletes)
