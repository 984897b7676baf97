"""An owner's plan, computed from what the caches hold and nothing else (no client): a missing
claim is created, one deleted a moment ago waits or is rechecked, one as desired costs nothing, one
with other labels or no controller is adopted, one another object controls is reported, and the
stale ones are deleted at the replicas the owner has."""

from __future__ import annotations

import dataclasses

from webhook.core.model.meta import OwnerReference
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.sharing.owners import Owner, live_owners
from webhook.reconciler.cluster import ClaimRecord, RecentDeletions
from webhook.reconciler.sync import plan
from webhook.reconciler.sync.plan import StaleCandidates

BASE = {"app.kubernetes.io/managed-by": "grove-operator", "app.kubernetes.io/part-of": "solo", "app.kubernetes.io/component": "resource-claim"}
INDEX = "grove.io/podcliqueset-replica-index"
OWNER = OwnerReference.controlling("PodCliqueSet", "solo", "pcs-uid")


class Clock:
    now = 500.0

    def __call__(self) -> float:
        return self.now


class View:
    """The claim cache as the plan reads it."""

    def __init__(self, *records: ClaimRecord) -> None:
        self.records = {r.name: r for r in records}
        self.recently_deleted = RecentDeletions(delay=1.0, keep=30.0, clock=Clock())

    def claim(self, namespace: str, name: str) -> ClaimRecord | None:
        return self.records.get(name)


def solo(replicas: int = 2) -> Owner:
    pcs = read_podcliqueset(
        {
            "metadata": {"name": "solo", "namespace": "default", "uid": "pcs-uid"},
            "spec": {"replicas": replicas, "template": {"resourceSharing": [{"name": "gpu", "scope": "AllReplicas"}, {"name": "gpu", "scope": "PerReplica"}]}},
        }
    )
    return live_owners(pcs, [], [])[0]


def record(name: str, labels: dict[str, str], owners: tuple[OwnerReference, ...] = (OWNER,)) -> ClaimRecord:
    return ClaimRecord("default", name, f"{name}-uid", "1", labels, owners)


def desired(name: str, replica: int | None) -> ClaimRecord:
    return record(name, BASE if replica is None else {**BASE, INDEX: str(replica)})


def kinds(actions: list[plan.Action]) -> list[tuple[str, str]]:
    named = []
    for action in actions:
        name = action.claim.name if isinstance(action, plan.Create | plan.Recreate | plan.Adopt) else ""
        named.append((type(action).__name__, name))
    return named


def test_missing_claims_are_created_in_groves_order() -> None:
    assert kinds(plan.claims(solo(), "default", View(), 0, 10)) == [
        ("Create", "solo-all-gpu"), ("Create", "solo-0-gpu"), ("Create", "solo-1-gpu"),
    ]


def test_claims_as_desired_cost_nothing_and_a_chunk_is_only_its_positions() -> None:
    view = View(desired("solo-all-gpu", None), desired("solo-0-gpu", 0))
    assert kinds(plan.claims(solo(), "default", view, 0, 10)) == [("Create", "solo-1-gpu")]
    assert kinds(plan.claims(solo(), "default", View(), 1, 2)) == [("Create", "solo-0-gpu")]


def test_a_claim_with_other_labels_or_no_controller_is_adopted_and_one_controlled_by_another_reported() -> None:
    stranger = OwnerReference("apps/v1", "Deployment", "d", "d-uid", True, None)
    view = View(record("solo-all-gpu", {}, ()), record("solo-0-gpu", {**BASE, INDEX: "0"}, (stranger,)))
    actions = plan.claims(solo(), "default", view, 0, 2)
    assert kinds(actions) == [("Adopt", "solo-all-gpu"), ("Report", "")]
    adopt, report = actions
    assert isinstance(adopt, plan.Adopt) and adopt.change.adopts and adopt.change.labels == BASE
    assert report == plan.Report("ResourceClaimOwnedByOther", "Object default/solo-0-gpu is already owned by another Deployment controller d")


def test_a_claim_deleted_an_instant_ago_waits_and_one_deleted_lately_is_rechecked() -> None:
    view = View()
    view.recently_deleted.observe("DELETED", {"metadata": {"namespace": "default", "name": "solo-all-gpu"}})
    assert plan.claims(solo(), "default", view, 0, 1) == [plan.Defer(1.0)]
    view.recently_deleted._clock.now += 5  # type: ignore[attr-defined]
    assert kinds(plan.claims(solo(), "default", view, 0, 1)) == [("Recreate", "solo-all-gpu")]
    rechecked = [a for a in plan.claims(solo(), "default", view, 0, 3) if isinstance(a, plan.Recreate)]
    assert [c.name for c in plan.still_needed(rechecked, 0)] == ["solo-all-gpu"]
    assert plan.still_needed(rechecked, None) == []


def test_stale_claims_are_deleted_at_the_replicas_the_owner_has_or_was_read_with() -> None:
    claims = [desired(f"solo-{i}-gpu", i) for i in range(4)]
    candidates = StaleCandidates(claims)
    owner = solo(replicas=1)
    assert [r.name for r in plan.cleanup(owner, candidates)] == ["solo-1-gpu", "solo-2-gpu", "solo-3-gpu"]
    assert [r.name for r in plan.cleanup(owner, candidates, replicas=3)] == ["solo-3-gpu"]
    assert [r.name for r in plan.cleanup(owner, candidates, replicas=0)] == ["solo-1-gpu", "solo-2-gpu", "solo-3-gpu"]


def test_an_owner_with_negative_replicas_or_over_the_limit_is_reported() -> None:
    owner = solo()
    assert plan.owner_reports(owner, 10) == []
    [over] = plan.owner_reports(owner, 2)
    assert over.reason == "ResourceClaimLimitExceeded"
    [negative] = plan.owner_reports(dataclasses.replace(owner, replicas=-1), 10)
    assert negative.reason == "ResourceClaimInvalidReplicas"
