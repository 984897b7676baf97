"""Grove's end-to-end resource-sharing scenario (BEHAVIOUR.md §7.2), played against the fake
API server: after every step, exactly the claims Grove would have, with their full labels, one
controller reference to the current owner object, and the spec of their template."""

from __future__ import annotations

from collections.abc import Callable

from fakeapi import FakeApiServer, wait_until
from reconciler.conftest import Start
from reconciler.e2e import PCS, STEPS
from reconciler.expected import Claim, Expect, actual
from reconciler.grove import GroveOperator, ext_ns_template, workload


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

    grove = GroveOperator(fake_api, pcs)
    first, *middle, last = STEPS
    first.act(grove)
    settle(fake_api, lambda: first.want(e), first.count)
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

    for step in middle:
        step.act(grove)
        settle(fake_api, lambda: step.want(e), step.count)

    # The PodCliqueSet is deleted: the garbage collector takes every claim; the templates stay.
    last.act(grove)
    settle(fake_api, lambda: last.want(e), last.count)
    assert fake_api.get("resourceclaimtemplates", "default", "ext-tpl") is not None
    assert fake_api.get("resourceclaimtemplates", "rs-shared", "ext-ns-tpl") is not None
    # Only stale PerReplica claims were ever deleted by the reconciler, one by one, by UID.
    deletes = fake_api.requests.matching("DELETE", "/resourceclaims")
    assert deletes and all(not r.path.endswith("/resourceclaims") for r in deletes)
