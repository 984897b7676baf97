"""Beside Grove's own operator (v0.1.0-alpha.8 and later), which creates the same claims: Grove's
end-to-end scale steps (BEHAVIOUR.md §7.2) played with both writing, the owners' watches
lagging behind the claims' so that the operator's new claims reach the reconciler before the
scaled owners do. The claims converge after every step, the reconciler never deletes a claim that
should exist, and once converged it writes nothing while resyncs come and go."""

from __future__ import annotations

import time
from typing import Any

from fakeapi import FakeApiServer, wait_until

from reconciler.conftest import Start
from reconciler.expected import actual
from reconciler.grove import GroveOperator, ext_ns_template, workload
from reconciler.groveclaims import GroveClaims

LAG = 0.4
"""Seconds the owners' watch events lag behind the claims'."""
OWNERS = ("podcliquesets", "podcliquescalinggroups", "podcliques")
STEPS = [
    ("podcliquescalinggroups", "{pcs}-0-sga", 1),
    ("podcliquescalinggroups", "{pcs}-0-sga", 3),
    ("podcliques", "{pcs}-0-worker-a", 2),
    ("podcliques", "{pcs}-0-worker-a", 1),
    ("podcliquesets", "{pcs}", 2),
    ("podcliquesets", "{pcs}", 1),
]
ROUNDS, TOGETHER = 2, 3
QUIET = 8.0
"""Seconds watched once converged: four resyncs of every PodCliqueSet (every 2 s)."""


def setup_templates(fake_api: FakeApiServer) -> dict[str, Any]:
    ext_tpl, pcs = workload()
    fake_api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "rs-shared"}})
    fake_api.create(ext_ns_template())
    fake_api.create({**ext_tpl, "metadata": {**ext_tpl["metadata"], "namespace": "default"}})
    return pcs


def renamed(pcs: dict[str, Any], name: str) -> dict[str, Any]:
    return {**pcs, "metadata": {**pcs["metadata"], "name": name}}


def converged(fake_api: FakeApiServer, operators: list[GroveClaims]) -> bool:
    return all(actual(fake_api, part_of=op.grove.name) == op.desired() for op in operators)


def settled(running: Any, plural: str, name: str, replicas: int) -> bool:
    """The reconciler has seen the scaled owner (its watch lags) and has nothing left to do."""
    informer = {"podcliquesets": "podcliquesets", "podcliquescalinggroups": "scaling_groups",
                "podcliques": "cliques"}[plural]
    cached = getattr(running.controller.caches, informer).get("default", name)
    return cached is not None and cached.spec.replicas == replicas and running.controller.queue.idle


def deleted_by_reconciler(fake_api: FakeApiServer) -> set[str]:
    return {r.path.rsplit("/", 1)[1] for r in fake_api.requests.matching("DELETE", "/resourceclaims/")}


def test_beside_grove_s_operator_claims_converge_nothing_needed_is_deleted_and_nobody_fights(
    fake_api: FakeApiServer, start_reconciler: Start
) -> None:
    pcs = setup_templates(fake_api)
    for resource in OWNERS:
        fake_api.delay_watch(resource, LAG)
    running = start_reconciler(resync_period=2.0)
    running.wait_active()
    wrongly_deleted: list[tuple[str, str]] = []
    operators: list[GroveClaims] = []

    for round_ in range(ROUNDS):
        group = []
        for k in range(TOGETHER):
            grove = GroveOperator(fake_api, renamed(pcs, f"rs-{round_}-{k}"))
            grove.sync()
            group.append(GroveClaims(fake_api, grove))
        for op in group:
            op.reconcile()
        operators += group
        wait_until(lambda: converged(fake_api, operators), timeout=10, message=f"round {round_}: claims created")
        for plural, name, replicas in STEPS:
            fake_api.requests.reset()
            for op in group:
                op.grove.scale(plural, name.format(pcs=op.grove.name), replicas)
                op.reconcile()
            step = f"{plural} {name} -> {replicas}"
            for op in group:
                owner = name.format(pcs=op.grove.name)
                wait_until(lambda: settled(running, plural, owner, replicas), timeout=10, message=f"{step}: settled")
            needed = {claim for op in operators for claim in op.desired()}
            wrongly_deleted += [(step, c) for c in sorted(deleted_by_reconciler(fake_api) & needed)]
            assert wrongly_deleted == []
            wait_until(lambda: converged(fake_api, operators), timeout=10, message=f"{step}: converged")

    assert wrongly_deleted == []
    assert sum(len(op.desired()) for op in operators) == ROUNDS * TOGETHER * 14

    # Converged: Grove keeps reconciling (an Update of every claim, which changes nothing), the
    # reconciler resyncs every 2 s, and no claim is written by either.
    registry = running.controller.metrics.registry
    before = registry.get_sample_value("grove_sharing_reconciler_reconciles_total", {"result": "success"}) or 0
    fake_api.requests.reset()
    written = fake_api.resource_version
    deadline = time.monotonic() + QUIET
    while time.monotonic() < deadline:
        for op in operators:
            op.reconcile()
        assert [r for r in fake_api.requests if not r.is_watch] == []
        assert fake_api.resource_version == written
        time.sleep(1.0)
    after = registry.get_sample_value("grove_sharing_reconciler_reconciles_total", {"result": "success"}) or 0
    assert after - before >= 3 * len(operators)  # several resyncs of every PodCliqueSet
    assert converged(fake_api, operators)
