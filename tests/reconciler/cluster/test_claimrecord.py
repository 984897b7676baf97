"""What the reconciler keeps of a claim: Grove's labels and the owner references, exactly as the
API server has them, in about 1 KB per cached claim (2.5 KB before: two copies of the parsed
metadata); and the stale claims it finds in those records are the ones Grove's selectors find."""

from __future__ import annotations

import dataclasses
import gc
import tracemalloc
from typing import Any

import orjson
from core.sharing.oracle import stale_claims
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kubernetes import client

from webhook.core.model.meta import OwnerReference
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.model.podcliqueset import PodClique, PodCliqueScalingGroup, read_podclique, read_scaling_group
from webhook.core.sharing.owners import Owner, live_owners
from webhook.reconciler.cluster import Caches, ClaimRecord
from webhook.reconciler.sync.plan import StaleCandidates, controlled_by_other

BASE = {
    "app.kubernetes.io/managed-by": "grove-operator",
    "app.kubernetes.io/part-of": "big",
    "app.kubernetes.io/component": "resource-claim",
}
POD_INDEX, PCLQ = "grove.io/podclique-pod-index", "grove.io/podclique"
PCS_INDEX, PCSG, PCSG_INDEX = "grove.io/podcliqueset-replica-index", "grove.io/podcliquescalinggroup", "grove.io/podcliquescalinggroup-replica-index"
OWNER = {"apiVersion": "grove.io/v1alpha1", "kind": "PodClique", "name": "big-0-w", "uid": "6f1c2d3e-0001",
         "controller": True, "blockOwnerDeletion": True}


def claim(i: int, labels: dict[str, str] | None = None, owners: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": f"big-0-w-{i}-gpu", "namespace": "default", "uid": f"0b5e5c1e-7d0e-4c57-9f3b-{i:012d}",
            "resourceVersion": str(100000 + i), "creationTimestamp": "2026-11-24T06:00:00Z",
            "labels": {**BASE, PCLQ: "big-0-w", POD_INDEX: str(i)} if labels is None else labels,
            "ownerReferences": [OWNER] if owners is None else owners,
        },
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    }


def test_a_record_gives_back_grove_s_labels_and_every_owner_reference() -> None:
    other = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u"}
    labels = {**BASE, PCLQ: "big-0-w", POD_INDEX: "7", PCS_INDEX: "0", "team": "a"}
    record = ClaimRecord.from_object(claim(7, labels, [other, OWNER]))
    assert record.labels == {k: v for k, v in labels.items() if k != "team"}
    assert record.references == (OwnerReference.from_api(other), OwnerReference.from_api(OWNER))
    assert (record.name, record.uid, record.resource_version, record.deleting) == (
        "big-0-w-7-gpu", "0b5e5c1e-7d0e-4c57-9f3b-000000000007", "100007", False)


def test_a_cached_claim_costs_about_a_kilobyte() -> None:
    caches = Caches(client.ApiClient(), (), lambda key, delay: None)
    (informer,) = caches.claims  # all namespaces: one informer
    events = [orjson.dumps({"type": "ADDED", "object": claim(i)}) for i in range(5000)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for event in events:
            informer._apply(orjson.loads(event))  # what the watch does with each event
        gc.collect()
        grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
    finally:
        tracemalloc.stop()
    assert len(caches.claims) == 5000
    assert grown / 5000 < 1100, f"{grown / 5000:.0f} bytes per claim"


# --- stale claims found in records are Grove's -------------------------------------------------------

def workload() -> tuple[PodCliqueSet, list[Owner]]:
    sharing = [{"name": "t", "scope": "PerReplica"}]
    pcs = read_podcliqueset({
        "metadata": {"name": "big", "namespace": "default", "uid": "pcs"},
        "spec": {"replicas": 2, "template": {
            "resourceSharing": sharing,
            "cliques": [{"name": "w", "resourceSharing": sharing}],
            "podCliqueScalingGroups": [{"name": "g", "cliqueNames": ["w"], "resourceSharing": sharing}],
        }},
    })
    group = read_scaling_group(
        {"metadata": {"name": "big-0-g", "namespace": "default", "uid": "g", "labels": {PCS_INDEX: "0"}},
         "spec": {"replicas": 2}})
    clique = read_podclique(
        {"metadata": {"name": "big-0-w", "namespace": "default", "uid": "w",
                      "labels": {"app.kubernetes.io/part-of": "big", PCS_INDEX: "0"}},
         "spec": {"replicas": 2}})
    return pcs, live_owners((pcs), [group], [clique])


label_values = {
    "app.kubernetes.io/managed-by": st.sampled_from(["grove-operator", "someone"]),
    "app.kubernetes.io/part-of": st.sampled_from(["big", "other"]),
    "app.kubernetes.io/component": st.sampled_from(["resource-claim"]),
    PCS_INDEX: st.sampled_from(["0", "1", "2", "01", "x"]),
    PCSG: st.sampled_from(["big-0-g", "big-1-g"]),
    PCSG_INDEX: st.sampled_from(["0", "1", "3"]),
    PCLQ: st.sampled_from(["big-0-w", "big-0-w2"]),
    POD_INDEX: st.sampled_from(["0", "2", "10"]),
    "team": st.just("a"),
}
owner_refs = st.sampled_from([[], [OWNER], [{**OWNER, "kind": "PodCliqueSet", "name": "big", "uid": "pcs"}],
                              [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "d", "controller": True}]])
claims = st.lists(
    st.tuples(st.fixed_dictionaries({}, optional=label_values), owner_refs, st.booleans()), max_size=25
)


@settings(derandomize=True, database=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(claims, st.integers(0, 3))
def test_stale_claims_found_in_records_are_those_grove_s_selectors_find(
    found: list[tuple[dict[str, str], list[dict[str, Any]], bool]], replicas: int
) -> None:
    records = []
    for i, (labels, owners, deleting) in enumerate(found):
        obj = claim(i, labels, owners)
        if deleting:
            obj["metadata"]["deletionTimestamp"] = "2026-11-24T06:00:00Z"
        records.append(ClaimRecord.from_object(obj))
    candidates = StaleCandidates(records)
    for owned in workload()[1]:
        owned = dataclasses.replace(owned, replicas=replicas)
        mine = [r for r in records if not r.deleting and controlled_by_other(r.references, owned.reference) is None]
        expected = sorted(stale_claims(owned, [(r.name, r.labels) for r in mine]))
        assert [r.name for r in candidates.stale(owned, replicas)] == expected
