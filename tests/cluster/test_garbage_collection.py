"""Claims go with their owners, by the real garbage collector: deleting a PodCliqueSet (in the
background or in the foreground), a scaling group or a PodClique removes exactly the claims they
own, directly or through their children; deleting the namespace completes."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cluster import kube
from cluster.groveapi import ClusterApi
from cluster.processes import Command
from cluster.workloads import INITIAL, claims, end_to_end, wait_for_claims
from reconciler.e2e import PCS

Obj = dict[str, Any]


def owned_by(api: ClusterApi, namespace: str, plural: str, name: str, found: dict[str, Obj]) -> set[str]:
    """The claims owned by the object or by the PodCliques it owns."""
    owner = api.get(plural, namespace, name)
    assert owner is not None
    uids = {owner["metadata"]["uid"]}
    for clique in api.list("podcliques", namespace):
        if any(ref["uid"] in uids for ref in clique["metadata"].get("ownerReferences", [])):
            uids.add(clique["metadata"]["uid"])
    return {n for n, c in found.items() if c["metadata"]["ownerReferences"][0]["uid"] in uids}


@pytest.mark.parametrize(("plural", "name"), [("podcliquescalinggroups", f"{PCS}-0-sga"), ("podcliques", f"{PCS}-0-worker-a")])
def test_deleting_a_scaling_group_or_a_clique_removes_exactly_its_claims(
    admin: client.ApiClient, reconciling: Command, plural: str, name: str
) -> None:
    namespace = f"rs-gc-{plural}"
    end_to_end(admin, namespace)
    api = ClusterApi(admin)
    before = wait_for_claims(api, namespace, INITIAL)
    gone = owned_by(api, namespace, plural, name, before)
    assert gone
    api.delete(plural, namespace, name)
    kube.wait_for(lambda: set(claims(api, namespace)) == set(before) - gone, f"the claims of {name} collected")


@pytest.mark.parametrize("propagation", ["Background", "Foreground"])
def test_deleting_the_podcliqueset_removes_every_claim(admin: client.ApiClient, reconciling: Command, propagation: str) -> None:
    namespace = f"rs-gc-{propagation.lower()}"
    end_to_end(admin, namespace)
    api = ClusterApi(admin)
    wait_for_claims(api, namespace, INITIAL)
    api.delete("podcliquesets", namespace, PCS, propagation_policy=propagation)
    kube.wait_for(lambda: not claims(api, namespace) and api.get("podcliquesets", namespace, PCS) is None,
                  "the PodCliqueSet and every claim gone")
    assert api.get("resourceclaimtemplates", namespace, "ext-tpl") is not None


def test_deleting_the_namespace_completes(admin: client.ApiClient, reconciling: Command) -> None:
    namespace = "rs-gc-namespace"
    end_to_end(admin, namespace)
    wait_for_claims(ClusterApi(admin), namespace, INITIAL)
    core = client.CoreV1Api(admin)
    core.delete_namespace(namespace)

    def gone() -> bool:
        try:
            core.read_namespace(namespace)
        except ApiException as err:
            return err.status == 404
        return False

    kube.wait_for(gone, f"namespace {namespace} deleted", 60)
