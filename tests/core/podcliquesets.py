"""PodCliqueSets and their AdmissionReviews for the validating webhook's tests.

The workload and the review envelope come from the examples generator, so the example files and the
tests are built by the same code. ``small`` is a PodCliqueSet with one entry per level, for tests
whose messages print whole lists.
"""

from __future__ import annotations

import copy
from typing import Any


from core.answers import validated
from core.generators import load

generate = load("generate_podcliquesets")
workload = generate.workload_pcs
pcs_review = generate.pcs_review

Object = dict[str, Any]
GPU_TEMPLATE: Object = {
    "name": "gpu",
    "templateSpec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}},
}


def _clique(name: str, sharing: list[Object] | None = None) -> Object:
    clique: Object = {
        "name": name,
        "spec": {"roleName": name, "replicas": 1, "minAvailable": 1, "podSpec": {"containers": [{"name": name, "image": "busybox"}]}},
    }
    if sharing is not None:
        clique["resourceSharing"] = sharing
    return clique


def small() -> Object:
    """PodCliqueSet ``p``: template ``gpu`` shared AllReplicas by the PodCliqueSet, PerReplica by the
    standalone clique ``a``, AllReplicas by scaling group ``g`` (member ``b``, which shares nothing)."""
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "template": {
                "resourceClaimTemplates": [copy.deepcopy(GPU_TEMPLATE)],
                "resourceSharing": [{"name": "gpu", "scope": "AllReplicas"}],
                "cliques": [_clique("a", [{"name": "gpu", "scope": "PerReplica"}]), _clique("b")],
                "podCliqueScalingGroups": [
                    {"name": "g", "cliqueNames": ["b"], "resourceSharing": [{"name": "gpu", "scope": "AllReplicas"}]}
                ],
            },
        },
    }


def cross_namespace() -> Object:
    """``small`` with templates of other namespaces at every level: ``team-b/ext`` twice (the
    PodCliqueSet and clique ``a``), ``team-b/ext2`` (clique ``a``), ``team-c/ext`` (group ``g``), and
    one of its own namespace, which needs no question (DECISIONS.md §3.1)."""
    pcs = small()
    template = pcs["spec"]["template"]
    template["resourceSharing"].append({"name": "ext", "namespace": "team-b", "scope": "AllReplicas"})
    template["resourceSharing"].append({"name": "own", "namespace": "default", "scope": "AllReplicas"})
    template["cliques"][0]["resourceSharing"] += [
        {"name": "ext", "namespace": "team-b", "scope": "PerReplica"},
        {"name": "ext2", "namespace": "team-b", "scope": "PerReplica"},
    ]
    template["podCliqueScalingGroups"][0]["resourceSharing"].append({"name": "ext", "namespace": "team-c", "scope": "AllReplicas"})
    return pcs


def respond(review: Object, strict: bool = False) -> Object:
    """The ``response`` of the decision on ``review`` (an AdmissionReview answered with HTTP 200)."""
    decision = validated(review, strict)
    assert decision.status == 200, decision.body
    response: Object = decision.body["response"]
    return response


def create(obj: Object, strict: bool = False) -> Object:
    return respond(pcs_review(obj), strict)


def update(new: Object, old: Object, strict: bool = False) -> Object:
    return respond(pcs_review(new, operation="UPDATE", old=old), strict)


def denial(response: Object) -> str:
    """The aggregate message of a denial (fails the test when the response is not one)."""
    assert response["allowed"] is False and response["status"]["code"] == 403, response
    assert response["status"]["reason"] == "Forbidden"
    message: str = response["status"]["message"]
    return message
