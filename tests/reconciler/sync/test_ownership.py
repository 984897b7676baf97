"""Adopting an existing claim (BEHAVIOUR.md §4.7): what changes, and what is refused."""

from __future__ import annotations

from typing import Any

import pytest

from webhook.core.model.meta import OwnerReference
from pydantic import TypeAdapter

from webhook.core.model.podcliqueset import ResourceSharingSpec
from webhook.core.sharing.desired import DesiredClaim
from webhook.core.sharing.owners import Level
from webhook.reconciler.sync.plan import MetadataChange, OwnedByOther, plan_change as plan

OWNER = OwnerReference.controlling("PodClique", "rs-test-0-worker-a", "uid-new")
LABELS = {"app.kubernetes.io/part-of": "rs-test", "grove.io/podclique": "rs-test-0-worker-a"}
DESIRED = DesiredClaim(
    "rs-test-0-worker-a-0-int-tpl4",
    LABELS,
    OWNER,
    TypeAdapter(ResourceSharingSpec).validate_python({"name": "int-tpl4", "scope": "PerReplica"}),
    "spec.template.cliques[0].resourceSharing[0]",
    Level.CLIQUE,
    0,
)
OURS = {
    "apiVersion": "grove.io/v1alpha1",
    "kind": "PodClique",
    "name": "rs-test-0-worker-a",
    "uid": "uid-new",
    "controller": True,
    "blockOwnerDeletion": True,
}
OTHER_OWNER = {"apiVersion": "v1", "kind": "ConfigMap", "name": "notes", "uid": "cm"}


def ref(**fields: Any) -> OwnerReference:
    return OwnerReference.from_api({**OURS, **fields})


def refs(*references: dict[str, Any] | OwnerReference) -> list[OwnerReference]:
    return [r if isinstance(r, OwnerReference) else OwnerReference.from_api(r) for r in references]


@pytest.mark.parametrize(
    ("labels", "references", "expected"),
    [
        (LABELS, [OURS], None),
        ({**LABELS, "team": "a"}, [OURS], None),
        ({}, [], MetadataChange(LABELS, [OURS])),
        ({"team": "a", "grove.io/podclique": "old"}, [OURS], MetadataChange({"app.kubernetes.io/part-of": "rs-test", "grove.io/podclique": "rs-test-0-worker-a"}, None)),
        (LABELS, [OTHER_OWNER], MetadataChange({}, [OTHER_OWNER, OURS])),
        (LABELS, [ref(uid="uid-old")], MetadataChange({}, [OURS])),
        (LABELS, [OTHER_OWNER, ref(uid="uid-old", controller=False)], MetadataChange({}, [OTHER_OWNER, OURS])),
        (LABELS, [ref(apiVersion="grove.io/v1beta1", uid="uid-old")], MetadataChange({}, [OURS])),
        (LABELS, [ref(kind="PodCliqueScalingGroup")], OwnedByOther(ref(kind="PodCliqueScalingGroup"))),
        (LABELS, [ref(name="rs-test-1-worker-a")], OwnedByOther(ref(name="rs-test-1-worker-a"))),
        (LABELS, [ref(apiVersion="apps/v1", kind="PodClique")], OwnedByOther(ref(apiVersion="apps/v1", kind="PodClique"))),
    ],
    ids=[
        "as-desired",
        "extra-labels-are-kept",
        "unowned-and-unlabelled",
        "labels-only",
        "non-controller-owner-kept",
        "re-created-owner-rewritten",
        "non-controller-reference-to-the-owner-becomes-the-controller",
        "other-version-same-group",
        "other-kind",
        "other-name",
        "other-group",
    ],
)
def test_plan(labels: dict[str, str], references: list[Any], expected: Any) -> None:
    if isinstance(expected, MetadataChange) and expected.owner_references is not None:
        expected = MetadataChange(expected.labels, refs(*expected.owner_references))
    assert plan(labels, refs(*references), DESIRED) == expected


def test_a_new_reference_list_is_sent_with_the_resource_version_it_was_computed_from() -> None:
    change = MetadataChange({"team": "a"}, refs(OURS))
    assert change.adopts
    assert change.merge_patch("42") == {"metadata": {"labels": {"team": "a"}, "ownerReferences": [OURS], "resourceVersion": "42"}}
    assert MetadataChange({"team": "a"}, None).merge_patch("42") == {"metadata": {"labels": {"team": "a"}}}


def test_the_refusal_reads_as_grove_s() -> None:
    refusal = OwnedByOther(OwnerReference("apps/v1", "Deployment", "other", "u", True))
    assert refusal.message("default", "c") == "Object default/c is already owned by another Deployment controller other"
