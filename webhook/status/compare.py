"""What is wrong with one PodCliqueSet's shared claims, compared with what the cluster holds.

Pure: the claims that must exist and each pod's claims come from ``claims.listing`` (the functions
the webhooks and the reconciler use, with the replica counts of the PodCliqueScalingGroups and
PodCliques that exist); the cluster's side is what ``status.observed`` listed. A missing claim is
given the reason the reconciler would have (DECISIONS.md §8): its name unusable, its template not
found, its owner over ``--max-claims-per-owner``, a claim of that name controlled by another object,
or, none of those, not made yet; with the last Warning Event on its owner, the reconciler's own word.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from webhook.claims.listing import ListedClaim, Listing
from webhook.core.model import labels
from webhook.core.model.meta import ObjectKey, OwnerReference
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pcs.warnings import dns1123_label_problem
from webhook.core.sharing.desired import claim_count, over_limit
from webhook.core.sharing.owners import Owner
from webhook.reconciler.sync.ownership import MetadataChange, OwnedByOther, plan_change
from webhook.status.findings import Finding, Problem, Report
from webhook.status.observed import Cluster
from webhook.status.pods import pod_findings


def _owner_references(claim: Mapping[str, Any]) -> list[OwnerReference]:
    found = []
    for value in claim.get("metadata", {}).get("ownerReferences") or []:
        try:
            found.append(OwnerReference.from_api(value))
        except ValueError:
            continue
    return found


def _why_missing(listed: ListedClaim, cluster: Cluster) -> str:
    name = listed.claim.name
    problem = dns1123_label_problem(name)
    if problem:
        return f"its name is not a valid DNS label ({problem}): pods cannot name it"
    template = listed.template
    if isinstance(template, ObjectKey) and (template.namespace, template.name) not in cluster.templates:
        return f"its ResourceClaimTemplate {template.namespace}/{template.name} does not exist (or cannot be read)"
    return "not created yet: the reconciler has not made it (is it running, and allowed to?)"


def _claim_findings(listing: Listing, cluster: Cluster) -> Iterator[Finding]:
    namespace = listing.namespace
    for listed in listing.claims:
        desired = listed.claim
        subject = f"ResourceClaim {namespace}/{desired.name}"
        event = cluster.last_warning(desired.owner.uid)
        found = cluster.claims.get((namespace, desired.name))
        if found is None:
            yield Finding(Problem.CLAIM_MISSING, subject, f"missing: {_why_missing(listed, cluster)}", event)
            continue
        change = plan_change(found.get("metadata", {}).get("labels") or {}, _owner_references(found), desired)
        if isinstance(change, OwnedByOther):
            other = change.controller
            message = f"missing: a claim of that name is controlled by {other.kind} {other.name}, not {desired.owner.kind} {desired.owner.name}"
            yield Finding(Problem.CLAIM_MISSING, subject, message, event)
        elif isinstance(change, MetadataChange):
            yield Finding(Problem.CLAIM_NOT_GROVES, subject, _differs(change, desired.owner), event)


def _differs(change: MetadataChange, owner: OwnerReference) -> str:
    parts = []
    if change.labels:
        parts.append("labels " + ", ".join(f"{k}={v}" for k, v in sorted(change.labels.items())) + " missing or different")
    if change.adopts:
        parts.append(f"no owner reference to {owner.kind} {owner.name} (uid {owner.uid})")
    return "not Grove's: " + "; ".join(parts) + " (the reconciler adopts it on its next pass)"


def _stale(listing: Listing, cluster: Cluster, over: set[str]) -> Iterator[Finding]:
    """Claims labelled as this PodCliqueSet's shared claims that no owner needs (the replicas are
    gone, or the sharing entry is); those of an owner over the limit (UIDs ``over``) are its claims
    past the limit, not stale."""
    wanted = {listed.claim.name for listed in listing.claims}
    for (namespace, name), claim in cluster.claims.items():
        if namespace != listing.namespace or name in wanted or not _groves(claim, listing.name):
            continue
        if any(reference.uid in over for reference in _owner_references(claim)):
            continue
        message = "stale: no replica of its owner needs it (the reconciler deletes it unless it is stopped)"
        yield Finding(Problem.CLAIM_STALE, f"ResourceClaim {namespace}/{name}", message)


def _groves(claim: Mapping[str, Any], pcs: str) -> bool:
    """Whether the claim carries the labels of ``pcs``'s shared claims."""
    found = claim.get("metadata", {}).get("labels") or {}
    return found.get(labels.PART_OF) == pcs and all(found.get(k) == v for k, v in labels.claim_base_labels(pcs).items())


def _over_limit(owners: Sequence[Owner], limit: int) -> list[Owner]:
    return [owner for owner in owners if claim_count(owner) > limit]


def report(listing: Listing, pcs: PodCliqueSet, owners: Sequence[Owner], cluster: Cluster, limit: int) -> Report:
    """``listing`` (what must be) against ``cluster`` (what is)."""
    findings: list[Finding] = []
    if listing.denial:
        subject = f"PodCliqueSet {listing.namespace}/{listing.name}"
        findings.append(Finding(Problem.DENIED, subject, f"the validating webhook would deny it: {listing.denial}"))
    over = _over_limit(owners, limit)
    for owner in over:
        subject = f"{owner.reference.kind} {listing.namespace}/{owner.name}"
        message = over_limit(owner, claim_count(owner), limit)
        findings.append(Finding(Problem.OVER_LIMIT, subject, message, cluster.last_warning(owner.reference.uid)))
    findings += _claim_findings(listing, cluster)
    findings += _stale(listing, cluster, {owner.reference.uid for owner in over})
    pods = cluster.pods_of(listing.namespace, listing.name)
    findings += pod_findings(pcs, pods, cluster)
    present = sum((listing.namespace, c.claim.name) in cluster.claims for c in listing.claims)
    return Report(listing.namespace, listing.name, len(listing.claims), present, len(pods), findings, listing.warnings)
