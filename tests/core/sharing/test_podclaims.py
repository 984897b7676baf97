"""A pod's claims: every pod of a PodClique gets the same ones but for its own index's, which are
asked for only when a claim needs them."""

from __future__ import annotations

import pytest
from core.workload import workload_pcs, workload_pcs_raw

from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.sharing.placement import IdentityError, clique_identity, pod_claims

WORKER_A = clique_identity(
    "default", "rs-test", "rs-test-0-worker-a", {"app.kubernetes.io/part-of": "rs-test", "grove.io/podcliqueset-replica-index": "0"}
)


def test_the_pods_of_a_podclique_share_all_but_their_own_index() -> None:
    first, fourth = (pod_claims(workload_pcs(), WORKER_A, lambda index=index: index) for index in (0, 3))  # type: ignore[misc]
    assert first[:-1] == fourth[:-1]
    assert fourth[-1:] == ["rs-test-0-worker-a-3-int-tpl4"]


def test_the_pod_index_is_asked_for_only_when_a_claim_needs_it() -> None:
    raw = workload_pcs_raw()
    raw["spec"]["template"]["cliques"][0]["resourceSharing"] = [{"name": "ext-ns-tpl", "namespace": "rs-shared", "scope": "AllReplicas"}]

    def no_label() -> int:
        raise IdentityError("missing label")

    assert "rs-test-0-worker-a-all-ext-ns-tpl" in pod_claims(read_podcliqueset(raw), WORKER_A, no_label)
    with pytest.raises(IdentityError):
        pod_claims(workload_pcs(), WORKER_A, no_label)
