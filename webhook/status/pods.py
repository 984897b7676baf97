"""What is wrong with the pods of one PodCliqueSet: claims they should carry and do not, claims
they wait for that do not exist, and claims not yet allocated that keep them Pending.

Which claims a pod should carry is what the pod webhook would give it now (``podclaims`` with the
pod's labels, as ``core.pod.handler`` places it), so a pod created before the webhook was installed,
or admitted without it under ``failurePolicy: Ignore``, shows here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from webhook.core.model import labels
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.sharing.placement import IdentityError, clique_identity, pod_index
from webhook.core.sharing.podclaims import pod_claims
from webhook.status.findings import Finding, Problem
from webhook.status.observed import Cluster

RECREATE = "created before the webhook was installed, or admitted while it was down under failurePolicy Ignore: delete it so that it is made again with them"


def _carried(pod: Mapping[str, Any]) -> list[str]:
    entries = pod.get("spec", {}).get("resourceClaims") or []
    return [str(e["resourceClaimName"]) for e in entries if isinstance(e, dict) and e.get("resourceClaimName")]


def _expected(pcs: PodCliqueSet, pod: Mapping[str, Any]) -> list[str]:
    """The claims the pod webhook would give the pod; IdentityError when it would deny it."""
    metadata = pod["metadata"]
    pod_labels = metadata.get("labels") or {}
    identity = clique_identity(pcs.namespace, pcs.name, pod_labels[labels.PODCLIQUE], pod_labels)
    return pod_claims(pcs, identity, lambda: pod_index(pod_labels, f"{pcs.namespace}/{metadata['name']}"))


def _waiting(pod: Mapping[str, Any]) -> bool:
    """Pending, not yet placed on a node and not held by a scheduling gate (Grove gates its pods
    until their gang can be placed): what a claim not allocated keeps it."""
    spec = pod.get("spec", {})
    pending = pod.get("status", {}).get("phase", "Pending") == "Pending"
    return pending and not spec.get("nodeName") and not spec.get("schedulingGates")


def _lacking(pcs: PodCliqueSet, pod: Mapping[str, Any], subject: str, carried: list[str]) -> Iterator[Finding]:
    """The pod webhook's refusal of the pod, or the claims it would give the pod and it lacks."""
    try:
        lacking = [claim for claim in _expected(pcs, pod) if claim not in carried]
    except IdentityError as err:
        yield Finding(Problem.POD_UNPLACED, subject, f"the pod webhook would refuse it: {err}")
        return
    if lacking:
        yield Finding(Problem.POD_MISSING_CLAIMS, subject, f"does not carry {', '.join(lacking)}: {RECREATE}")


def pod_findings(pcs: PodCliqueSet, pods: Sequence[Mapping[str, Any]], cluster: Cluster) -> Iterator[Finding]:
    namespace = pcs.namespace
    waiting_on: dict[str, list[str]] = {}
    for pod in pods:
        name = pod["metadata"]["name"]
        subject = f"Pod {namespace}/{name}"
        carried = _carried(pod)
        yield from _lacking(pcs, pod, subject, carried)
        if not _waiting(pod):
            continue
        for claim in carried:
            found = cluster.claims.get((namespace, claim))
            if found is None:
                yield Finding(Problem.CLAIM_NOT_FOUND, subject, f"Pending: waits for ResourceClaim {claim}, which does not exist")
            elif not (found.get("status") or {}).get("allocation"):
                waiting_on.setdefault(claim, []).append(name)
    for claim, names in waiting_on.items():
        message = f"not allocated: {len(names)} pod(s) Pending on it ({', '.join(sorted(names))})"
        yield Finding(Problem.CLAIM_UNALLOCATED, f"ResourceClaim {namespace}/{claim}", message)
