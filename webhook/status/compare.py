"""What is wrong with one PodCliqueSet's shared claims and pods: what must exist, from
``claims.listing`` at the replica counts of the children that exist, against the ``Cluster`` that
``command`` read. Pure. A missing claim is given the reason the reconciler would have (DECISIONS.md
§8), with the last Warning Event on its owner, the reconciler's own word; a pod's claims are those
the pod webhook would give it now, so a pod admitted without it shows here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from webhook.claims.listing import Listing
from webhook.core.model import labels
from webhook.core.model.meta import ObjectKey, OwnerReference, read_owner_references
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pcs.warnings import dns1123_label_problem
from webhook.core.sharing.desired import DesiredClaim, claim_count, over_limit, template_source
from webhook.core.sharing.makers import Maker, claim_maker
from webhook.core.sharing.placement import IdentityError, clique_identity, pod_claims, pod_index
from webhook.reconciler.sync.plan import MetadataChange, OwnedByOther, plan_change

Key = tuple[str, str]
Obj = dict[str, Any]

RECREATE = "created before the webhook was installed, or admitted while it was down under failurePolicy Ignore: delete it so that it is made again with them"


@dataclass(frozen=True, slots=True)
class EventText:
    """An Event as ``kubectl describe`` shows one: type, reason, how often, message."""

    type: str
    reason: str
    message: str
    count: int
    last: str
    """When it was last seen (RFC 3339), as the API server wrote it."""

    def __str__(self) -> str:
        times = f" (x{self.count})" if self.count > 1 else ""
        return f"{self.type} {self.reason}{times} at {self.last}: {self.message}"

    @classmethod
    def of(cls, event: Obj) -> EventText:
        """When it last happened is the first of the fields events.k8s.io and core Events fill."""
        last = event.get("lastTimestamp") or event.get("eventTime") or (event.get("metadata") or {}).get("creationTimestamp")
        return cls(event.get("type") or "", event.get("reason") or "", event.get("message") or "", int(event.get("count") or 1), str(last or ""))


@dataclass(slots=True)
class Cluster:
    """The objects read, indexed as the comparison looks them up."""

    workload_objects: list[tuple[str, Obj]] = field(default_factory=list)
    """PodCliqueSets, scaling groups and PodCliques, each with where it came from."""
    claims: dict[Key, Obj] = field(default_factory=dict)
    templates: set[Key] = field(default_factory=set)
    pods: dict[Key, list[Obj]] = field(default_factory=dict)
    """Grove pods by (namespace, PodCliqueSet), those being deleted left out."""
    warnings: dict[str, EventText] = field(default_factory=dict)
    """The last Warning Event on each object, by its UID."""

    def last_warning(self, uid: str) -> EventText | None:
        return self.warnings.get(uid) if uid else None


class Problem(StrEnum):
    """What a finding is about; ``-o json`` carries it for scripts."""

    DENIED = "Denied"
    CLAIM_MISSING = "ClaimMissing"
    OVER_LIMIT = "OwnerOverLimit"
    CLAIM_STALE = "ClaimStale"
    CLAIM_NOT_GROVES = "ClaimNotGroves"
    POD_MISSING_CLAIMS = "PodMissingClaims"
    POD_UNPLACED = "PodUnplaced"
    CLAIM_NOT_FOUND = "PodWaitsForMissingClaim"
    CLAIM_UNALLOCATED = "ClaimNotAllocated"


@dataclass(frozen=True, slots=True)
class Finding:
    problem: Problem
    subject: str
    """The object it is about, ``Kind namespace/name``."""
    message: str
    event: EventText | None = None
    """The last Warning Event on the claim's owner, when the reconciler wrote one."""


@dataclass(frozen=True, slots=True)
class Report:
    """One PodCliqueSet: its counts, what is wrong, and the webhook's warnings (which alone are
    not wrong: a workload can run with them)."""

    namespace: str
    name: str
    claims: int
    present: int
    pods: int
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    made_by: Maker | None = None
    """Who made its claims (Grove's operator, once it has made one), as their managed fields say."""

    @property
    def healthy(self) -> bool:
        return not self.findings


def report(listing: Listing, cluster: Cluster, limit: int) -> Report:
    """``listing`` (what must be) against ``cluster`` (what is)."""
    pcs = listing.pcs
    findings: list[Finding] = []
    if listing.denial:
        findings.append(Finding(Problem.DENIED, f"PodCliqueSet {pcs.key}", f"the validating webhook would deny it: {listing.denial}"))
    over = [owner for owner in listing.owners if claim_count(owner) > limit]
    for owner in over:
        message = over_limit(owner, claim_count(owner), limit)
        findings.append(Finding(Problem.OVER_LIMIT, f"{owner.level.kind} {pcs.namespace}/{owner.name}", message, cluster.last_warning(owner.uid)))
    made_by = _made_by(listing, cluster)
    maker = (made_by or Maker.RECONCILER).who
    findings += _claim_findings(listing, cluster, maker)
    findings += _stale(listing, cluster, {owner.uid for owner in over}, maker)
    pods = cluster.pods.get(pcs.key, [])
    findings += _pod_findings(pcs, pods, cluster)
    present = sum((pcs.namespace, claim.name) in cluster.claims for claim in listing.claims)
    return Report(pcs.namespace, pcs.name, len(listing.claims), present, len(pods), findings, listing.warnings, made_by)


def _made_by(listing: Listing, cluster: Cluster) -> Maker | None:
    """Grove's operator if it made one of the claims present, else the reconciler if it made one,
    as the reconciler decides under ``--claims auto`` (``makers.who_makes``)."""
    found = (cluster.claims.get((listing.pcs.namespace, claim.name)) for claim in listing.claims)
    makers = {claim_maker(claim["metadata"]) for claim in found if claim is not None}
    return next((m for m in (Maker.GROVE, Maker.RECONCILER) if m in makers), None)


def _claim_findings(listing: Listing, cluster: Cluster, maker: str) -> Iterator[Finding]:
    for desired in listing.claims:
        subject = f"ResourceClaim {listing.pcs.namespace}/{desired.name}"
        event = cluster.last_warning(desired.owner.uid)
        found = cluster.claims.get((listing.pcs.namespace, desired.name))
        if found is None:
            yield Finding(Problem.CLAIM_MISSING, subject, f"missing: {_why_missing(desired, listing.pcs, cluster, maker)}", event)
            continue
        metadata = found["metadata"]
        change = plan_change(metadata.get("labels") or {}, read_owner_references(metadata.get("ownerReferences")), desired)
        if isinstance(change, OwnedByOther):
            other = change.controller
            message = f"missing: a claim of that name is controlled by {other.kind} {other.name}, not {desired.owner.kind} {desired.owner.name}"
            yield Finding(Problem.CLAIM_MISSING, subject, message, event)
        elif isinstance(change, MetadataChange):
            yield Finding(Problem.CLAIM_NOT_GROVES, subject, _differs(change, desired.owner, maker), event)


def _why_missing(claim: DesiredClaim, pcs: PodCliqueSet, cluster: Cluster, maker: str) -> str:
    problem = dns1123_label_problem(claim.name)
    if problem:
        return f"its name is not a valid DNS label ({problem}): pods cannot name it"
    template = template_source(pcs, claim.entry)
    if isinstance(template, ObjectKey) and (template.namespace, template.name) not in cluster.templates:
        return f"its ResourceClaimTemplate {template.namespace}/{template.name} does not exist (or cannot be read)"
    return f"not created yet: {maker} has not made it (is it running, and allowed to?)"


def _differs(change: MetadataChange, owner: OwnerReference, maker: str) -> str:
    parts = []
    if change.labels:
        parts.append("labels " + ", ".join(f"{k}={v}" for k, v in sorted(change.labels.items())) + " missing or different")
    if change.adopts:
        parts.append(f"no owner reference to {owner.kind} {owner.name} (uid {owner.uid})")
    return "not Grove's: " + "; ".join(parts) + f" ({maker} adopts it on its next pass)"


def _stale(listing: Listing, cluster: Cluster, over: set[str], maker: str) -> Iterator[Finding]:
    """Claims labelled as this PodCliqueSet's shared claims that no owner needs (the replicas are
    gone, or the sharing entry is); those of an owner over the limit (UIDs ``over``) are its claims
    past the limit, not stale."""
    wanted = {claim.name for claim in listing.claims}
    groves = labels.claim_base_labels(listing.pcs.name)
    for (namespace, name), claim in cluster.claims.items():
        metadata = claim["metadata"]
        if namespace != listing.pcs.namespace or name in wanted or not groves.items() <= (metadata.get("labels") or {}).items():
            continue
        if not any(reference.uid in over for reference in read_owner_references(metadata.get("ownerReferences"))):
            message = f"stale: no replica of its owner needs it ({maker} deletes it unless it is stopped)"
            yield Finding(Problem.CLAIM_STALE, f"ResourceClaim {namespace}/{name}", message)


def _pod_findings(pcs: PodCliqueSet, pods: Sequence[Mapping[str, Any]], cluster: Cluster) -> Iterator[Finding]:
    """Claims the pods should carry and do not, claims they wait for that do not exist, and claims
    not yet allocated that keep them Pending."""
    waiting_on: dict[str, list[str]] = {}
    for pod in pods:
        subject = f"Pod {pcs.namespace}/{pod['metadata']['name']}"
        carried = _carried(pod)
        yield from _lacking(pcs, pod, subject, carried)
        if not _waiting(pod):
            continue
        for claim in carried:
            found = cluster.claims.get((pcs.namespace, claim))
            if found is None:
                yield Finding(Problem.CLAIM_NOT_FOUND, subject, f"Pending: waits for ResourceClaim {claim}, which does not exist")
            elif not (found.get("status") or {}).get("allocation"):
                waiting_on.setdefault(claim, []).append(pod["metadata"]["name"])
    for claim, names in waiting_on.items():
        message = f"not allocated: {len(names)} pod(s) Pending on it ({', '.join(sorted(names))})"
        yield Finding(Problem.CLAIM_UNALLOCATED, f"ResourceClaim {pcs.namespace}/{claim}", message)


def _carried(pod: Mapping[str, Any]) -> list[str]:
    return [e["resourceClaimName"] for e in pod["spec"].get("resourceClaims") or [] if e.get("resourceClaimName")]


def _lacking(pcs: PodCliqueSet, pod: Mapping[str, Any], subject: str, carried: list[str]) -> Iterator[Finding]:
    """The pod webhook's refusal of the pod (placed by its labels as ``core.pod`` places it), or
    the claims it would give the pod and the pod lacks."""
    metadata = pod["metadata"]
    pod_labels = metadata.get("labels") or {}
    try:
        identity = clique_identity(pcs.namespace, pcs.name, pod_labels[labels.PODCLIQUE], pod_labels)
        expected = pod_claims(pcs, identity, lambda: pod_index(pod_labels, f"{pcs.namespace}/{metadata['name']}"))
    except IdentityError as err:
        yield Finding(Problem.POD_UNPLACED, subject, f"the pod webhook would refuse it: {err}")
        return
    lacking = [claim for claim in expected if claim not in carried]
    if lacking:
        yield Finding(Problem.POD_MISSING_CLAIMS, subject, f"does not carry {', '.join(lacking)}: {RECREATE}")


def _waiting(pod: Mapping[str, Any]) -> bool:
    """Pending, not yet placed on a node and not held by a scheduling gate (Grove gates its pods
    until their gang can be placed): what a claim not allocated keeps it."""
    spec = pod.get("spec", {})
    pending = pod.get("status", {}).get("phase", "Pending") == "Pending"
    return pending and not spec.get("nodeName") and not spec.get("schedulingGates")
