"""What one PodCliqueSet makes: its claims, its pods' claims, and what the validating webhook says,
each from the core functions the webhooks and the reconciler use (DECISIONS.md §1). Everything is
counted before anything is listed, so a spec of two billion replicas is refused with its counts
instead of being listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from webhook.claims.workloads import UNUSABLE, Workload
from webhook.core.gocompat.fielderrors import aggregate
from webhook.core.model.meta import ObjectKey
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pcs.rules import validate_create
from webhook.core.pcs.warnings import claim_warnings, limit_warnings
from webhook.core.sharing.desired import DesiredClaim, InternalTemplate, claim_count, desired_claims, template_source
from webhook.core.sharing.owners import Level, Owner, live_owners, planned_owners
from webhook.core.sharing.patterns import planned_size
from webhook.core.sharing.placement import CliqueIdentity, IdentityError, pod_claims
from webhook.errors import CommandError


@dataclass(frozen=True, slots=True)
class ListedClaim:
    claim: DesiredClaim
    namespace: str
    template: InternalTemplate | ObjectKey


@dataclass(frozen=True, slots=True)
class ListedPod:
    clique: str
    index: int
    claims: list[str]


@dataclass(frozen=True, slots=True)
class Listing:
    """One PodCliqueSet's claims and pods, in owner order, and what the validating webhook says."""

    namespace: str
    name: str
    live: bool
    """Whether the replica counts are the objects' (else the spec's)."""
    claims: list[ListedClaim]
    pods: list[ListedPod]
    warnings: list[str]
    denial: str | None
    notes: list[str]


def _natural(owner: Owner) -> list[str | int]:
    """``rs-test-2-sga`` before ``rs-test-10-sga``: digit runs compared as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", owner.name)]


def owners(workload: Workload) -> list[Owner]:
    """The PodCliqueSet first, then the others by name (numbers compared as numbers)."""
    pcs = workload.pcs
    groups = {group.metadata.name for group in workload.groups}

    def unplaced(name: str, message: str) -> None:
        kind = "PodCliqueScalingGroup" if name in groups else "PodClique"
        raise CommandError(f"{kind} {pcs.namespace}/{name} cannot be placed in PodCliqueSet {pcs.name}: {message}", UNUSABLE)

    found = live_owners(pcs, workload.groups, workload.cliques, unplaced) if workload.live else list(planned_owners(pcs))
    return [found[0], *sorted(found[1:], key=_natural)]


def check_sizes(workloads: list[Workload], limit: int) -> None:
    """Refuses, with its counts, the first PodCliqueSet whose claims plus pods, with those of the
    PodCliqueSets before it, are more than ``limit``, or whose owners are (each takes a walk)."""
    used = 0
    for workload in workloads:
        if workload.live:
            found = live_owners(workload.pcs, workload.groups, workload.cliques)
            count, claims = len(found), sum(map(claim_count, found))
            pods = sum(max(o.replicas, 0) for o in found if o.level is Level.CLIQUE)
        else:
            size = planned_size(workload.pcs.spec)
            count, claims, pods = size.owners, size.claims, size.pods
        if used + claims + pods > limit or count > limit:
            counts = "the objects given" if workload.live else f"spec.replicas {workload.pcs.spec.replicas} and the template's replica counts"
            across = f" across {count} owners" if used + claims + pods <= limit else ""
            before = f" besides the {used} of the PodCliqueSets before it" if used else ""
            raise CommandError(
                f"PodCliqueSet {workload.key} makes {claims} ResourceClaims for {pods} pods{across} (with {counts}){before}: "
                f"more than the limit of {limit} items (--max-items)",
                UNUSABLE,
            )
        used += claims + pods


def _pods(pcs: PodCliqueSet, identity: CliqueIdentity, replicas: int) -> Iterator[ListedPod]:
    """One per replica, each with the claims the pod webhook gives it."""
    for index in range(max(replicas, 0)):
        try:
            names = pod_claims(pcs, identity, lambda: index)  # noqa: B023 - called before the loop moves on
        except IdentityError as err:
            raise CommandError(f"{identity.key}: its pods cannot be placed: {err}", UNUSABLE) from None
        yield ListedPod(identity.clique_fqn, index, names)


def listing(workload: Workload, limit: int, strict: bool = False) -> Listing:
    """An owner needing more than ``limit`` claims has its first ``limit`` listed, as the reconciler
    makes no more, and the webhook's warning. Under ``strict`` the warnings about claim names and
    filters are part of the denial, as ``serve --strict`` makes them."""
    pcs = workload.pcs
    claims: list[ListedClaim] = []
    pods: list[ListedPod] = []
    for owner in owners(workload):
        claims.extend(ListedClaim(c, pcs.namespace, template_source(pcs, c.entry)) for c in desired_claims(owner, stop=limit))
        if owner.identity is not None:
            pods.extend(_pods(pcs, owner.identity, owner.replicas))
    errors, warnings = [str(e) for e in validate_create(pcs.spec)], claim_warnings(pcs)
    if strict:
        errors, warnings = errors + warnings, []
    return Listing(pcs.namespace, pcs.name, workload.live, claims, pods, [*warnings, *limit_warnings(pcs, limit)], aggregate(errors), workload.notes)
