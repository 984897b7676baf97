"""Warnings before a scale or a typo breaks a workload, and the trace of a patch, on the real
control plane (DECISIONS.md §3.3, DECISIONS.md §3.4, DECISIONS.md §4): ``kubectl scale podclique`` past the tenth replica and
``kubectl apply`` of a PodCliqueSet naming a template that does not exist print ``Warning:`` lines;
a pod the webhook patched carries the claims it added."""

from __future__ import annotations

import copy
import time

import yaml
from kubernetes import client

from cluster import kube
from cluster.groveapi import ClusterApi
from cluster.pods import create, grove_pods
from cluster.release import Release
from cluster.tools import Tool
from core.pcs.test_scale import PCS, TEMPLATE, spec
from reconciler.grove import GroveOperator

NAMESPACE = "rs-warnings"
ANNOTATION = "resource-sharing.grove.io/claims"


def warnings(stderr: str) -> list[str]:
    return [line.removeprefix("Warning: ") for line in stderr.splitlines() if line.startswith("Warning: ")]


def test_kubectl_scale_past_the_tenth_replica_prints_the_warning(release: Release, admin: client.ApiClient, kubectl: Tool) -> None:
    """Clique ``a`` of a PodCliqueSet of 9 characters shares a template of 47 PerReplica: its claim
    names are 63 characters up to replica 9, 64 at replica 10. The webhook finds the PodCliqueSet
    in its cache once the watch has delivered it: the scale is repeated, one more replica each
    time, until the warning shows (within a deadline)."""
    kube.create_namespace(admin, NAMESPACE)
    pcs = spec()
    pcs["metadata"]["namespace"] = NAMESPACE
    GroveOperator(ClusterApi(admin), pcs).sync()
    done = kubectl("scale", "podclique", f"{PCS}-0-a", "--replicas=10", "-n", NAMESPACE)
    assert warnings(done.stderr) == [], "index 9 still makes a valid name"
    deadline, replicas, found = time.monotonic() + 20, 10, []
    while not found and time.monotonic() < deadline:
        replicas += 1
        done = kubectl("scale", "podclique", f"{PCS}-0-a", f"--replicas={replicas}", "-n", NAMESPACE)
        found = warnings(done.stderr)
    assert found == [
        f'PodClique {PCS}-0-a at {replicas} replicas: claim name "{PCS}-0-a-10-{TEMPLATE}" '
        "(spec.template.cliques[0].resourceSharing[0]) is not a valid DNS-1123 label (must be no more than 63 characters); "
        "pods that reference it will be rejected"
    ]
    assert "scaled" in done.stdout


def test_kubectl_apply_of_a_template_typo_prints_the_warning(release: Release, admin: client.ApiClient, kubectl: Tool) -> None:
    kube.create_namespace(admin, f"{NAMESPACE}-typo")
    pcs = spec()
    pcs["metadata"] |= {"name": "typo", "namespace": f"{NAMESPACE}-typo"}
    pcs["spec"]["template"]["cliques"][1]["resourceSharing"] = [{"name": "gpu-tempalte", "scope": "AllReplicas"}]
    done = kubectl("apply", "--dry-run=server", "-f", "-", input=yaml.safe_dump(pcs))
    assert warnings(done.stderr) == [
        f'spec.template.cliques[1].resourceSharing[0]: ResourceClaimTemplate "{NAMESPACE}-typo/gpu-tempalte" not found; '
        "its claims are not created, and the pods that need them stay Pending, until it exists"
    ]


def test_a_patched_pod_records_the_claims_the_webhook_added(workload: GroveOperator, admin: client.ApiClient) -> None:
    pod = grove_pods(workload)[0]
    stored = create(admin, copy.deepcopy(pod))
    names = [claim["name"] for claim in stored["spec"]["resourceClaims"]]
    assert names and stored["metadata"]["annotations"][ANNOTATION] == ",".join(names)
