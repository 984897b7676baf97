"""Grove's end-to-end scenario on the real control plane (BEHAVIOUR.md §7.2): ``webhook reconcile``
runs as the chart's ServiceAccount, Grove's children are created and scaled as Grove's operator
would, and after every step the claims the API server returns are exactly Grove's: names, labels,
controller owner and spec (each template's spec as the API server returns it, its defaults
applied). Deleting the PodCliqueSet leaves their removal to the real garbage collector."""

from __future__ import annotations

from kubernetes import client

from cluster import kube
from cluster.groveapi import ClusterApi
from cluster.processes import Command
from cluster.workloads import as_stored, create_ignoring_conflict
from reconciler.e2e import PCS, STEPS
from reconciler.expected import Claim, Expect, actual
from reconciler.grove import GroveOperator, ext_ns_template, workload

NAMESPACE = "rs-e2e"
SETTLE = 30.0


def settle(api: ClusterApi, want: dict[str, Claim], label: str) -> None:
    try:
        kube.wait_for(lambda: actual(api, NAMESPACE, part_of=PCS) == want, f"the claims after step {label}", SETTLE)  # type: ignore[arg-type]
    finally:
        assert actual(api, NAMESPACE, part_of=PCS) == want, label  # type: ignore[arg-type]


def test_the_end_to_end_scenario(admin: client.ApiClient, reconciling: Command) -> None:
    api = ClusterApi(admin)
    for namespace in (NAMESPACE, "rs-shared"):
        kube.create_namespace(admin, namespace)
    create_ignoring_conflict(api, ext_ns_template())
    ext_tpl, pcs = workload()
    api.create({**ext_tpl, "metadata": {**ext_tpl["metadata"], "namespace": NAMESPACE}})
    pcs["metadata"]["namespace"] = NAMESPACE
    e = Expect(api, PCS, NAMESPACE, as_stored(api, NAMESPACE))  # type: ignore[arg-type]

    grove = GroveOperator(api, pcs)
    for step in STEPS:
        step.act(grove)
        want = step.want(e)
        assert len(want) == step.count
        settle(api, want, step.label)
    assert api.get("resourceclaimtemplates", NAMESPACE, "ext-tpl") is not None
