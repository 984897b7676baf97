"""A pod's claims: the part every pod of a PodClique shares, then its own index's, and the shared
part remembered per PodClique only while the store holds the same PodCliqueSet."""

from __future__ import annotations

import copy

import pytest
from core.workload import workload_pcs, workload_pcs_raw

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.projection import project
from webhook.core.sharing.placement import IdentityError, clique_identity
from webhook.core.sharing.podclaims import PodClaimsCache, claims_for_pod, pod_claims

WORKER_A = clique_identity(
    "default", "rs-test", "rs-test-0-worker-a", {"app.kubernetes.io/part-of": "rs-test", "grove.io/podcliqueset-replica-index": "0"}
)


def test_the_pods_of_a_podclique_share_all_but_their_own_index() -> None:
    claims = pod_claims(project(workload_pcs()), WORKER_A)
    assert claims.of_pod(lambda: 0)[: len(claims.shared)] == list(claims.shared)
    assert claims.of_pod(lambda: 3)[len(claims.shared) :] == ["rs-test-0-worker-a-3-int-tpl4"]
    assert claims_for_pod(project(workload_pcs()), WORKER_A, lambda: 3) == claims.of_pod(lambda: 3)


def test_the_pod_index_is_asked_for_only_when_a_claim_needs_it() -> None:
    raw = workload_pcs_raw()
    raw["spec"]["template"]["cliques"][0]["resourceSharing"] = [{"name": "ext-ns-tpl", "namespace": "rs-shared", "scope": "AllReplicas"}]

    def no_label() -> int:
        raise IdentityError("missing label")

    assert "rs-test-0-worker-a-all-ext-ns-tpl" in pod_claims(project(PodCliqueSet.model_validate(raw)), WORKER_A).of_pod(no_label)
    with pytest.raises(IdentityError):
        pod_claims(project(workload_pcs()), WORKER_A).of_pod(no_label)


def test_remembered_claims_follow_the_store() -> None:
    cache = PodClaimsCache(size=2)
    pcs = project(workload_pcs())
    first = cache.claims(pcs, WORKER_A)
    assert cache.claims(pcs, WORKER_A) is first
    raw = copy.deepcopy(workload_pcs_raw())
    raw["spec"]["template"]["cliques"][0]["resourceSharing"] = []
    changed = project(PodCliqueSet.model_validate(raw))
    assert cache.claims(changed, WORKER_A).of_pod(lambda: 0) == pod_claims(changed, WORKER_A).of_pod(lambda: 0)
    assert cache.claims(changed, WORKER_A).of_pod(lambda: 0) != first.of_pod(lambda: 0)
