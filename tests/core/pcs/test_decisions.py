"""PodCliqueSets read and checked once per content: the key keeps every member a decision reads, a
content seen before is answered from memory whatever else changed, and the answers are the ones a
fresh validator gives."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from fuzz.answers import FUZZ
from fuzz.strategies import EXAMPLES, PCS_EXAMPLES, dumps, mutated
from hypothesis import given, settings
from hypothesis import strategies as st

from core.answers import validated
from core.model.members import read_members
from core.podcliquesets import pcs_review, workload
from webhook.core.admission.handling import answer
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.pcs import handler
from webhook.core.pcs.decisions import VOLATILE, PodCliqueSetReads, sharing_members
from webhook.core.pcs.handler import PodCliqueSetValidator

WORKLOAD = workload()


def declared(obj: Any) -> Any:
    """Every member the read model declares, less the metadata left out of the key."""
    members = read_members(PodCliqueSet, obj)
    if isinstance(members, dict) and isinstance(members.get("metadata"), dict):
        for name in VOLATILE:
            members["metadata"].pop(name, None)
    return members


@settings(FUZZ, max_examples=150)
@given(data=st.data())
def test_the_key_keeps_every_member_the_model_reads(data: st.DataObject) -> None:
    try:
        obj = orjson.loads(dumps(data.draw(mutated(WORKLOAD, depths=(64, 300)))))
    except orjson.JSONDecodeError:
        return  # nested deeper than JSON is read
    if isinstance(obj, dict):
        assert declared(sharing_members(copy.deepcopy(obj))) == declared(obj)


def noise(obj: dict[str, Any], n: int) -> dict[str, Any]:
    """The same PodCliqueSet after a write that changed nothing a rule reads."""
    obj = copy.deepcopy(obj)
    obj["metadata"].update(
        {"uid": f"uid-{n}", "resourceVersion": str(n), "generation": n, "managedFields": [{"manager": f"m{n}"}],
         "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": str(n)}]}
    )
    obj["status"] = {"observedGeneration": n}
    obj["spec"]["template"]["cliques"][0]["spec"]["podSpec"]["containers"][0]["image"] = f"image:{n}"
    return obj


def test_a_content_is_read_once_whatever_else_a_write_changed() -> None:
    reads = PodCliqueSetReads()
    first = reads.read(noise(WORKLOAD, 1))
    assert [reads.read(noise(WORKLOAD, n)) is first for n in range(2, 6)] == [True] * 4
    assert len(reads) == 1
    scaled = copy.deepcopy(WORKLOAD)
    scaled["spec"]["replicas"] = 3
    assert reads.read(scaled) is not first and len(reads) == 2


def test_unreadable_changing_metadata_is_not_left_out() -> None:
    """A uid that is not a string makes the object unreadable, as Go's decoder finds: the object is
    read in full, not found by its other members."""
    reads = PodCliqueSetReads()
    reads.read(WORKLOAD)
    broken = copy.deepcopy(WORKLOAD)
    broken["metadata"]["uid"] = 7
    read = reads.read(broken)
    assert read.model is None and read.problem.startswith("metadata.uid: ")


def test_the_cache_is_bounded() -> None:
    reads = PodCliqueSetReads(size=3)
    for n in range(10):
        other = copy.deepcopy(WORKLOAD)
        other["metadata"]["name"] = f"pcs-{n}"
        reads.read(other)
    assert len(reads) == 3


def test_an_update_that_changes_no_compared_member_runs_no_immutability_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    passes: list[Any] = []
    real = handler.validate_update
    monkeypatch.setattr(handler, "validate_update", lambda new, old: passes.append(new) or real(new, old))
    validator = PodCliqueSetValidator()
    scaled = copy.deepcopy(WORKLOAD)
    scaled["spec"]["replicas"] = 2
    answered = _answered(validator, orjson.dumps(pcs_review(scaled, operation="UPDATE", old=WORKLOAD)))
    assert answered["response"]["allowed"] is True and passes == []
    changed = copy.deepcopy(scaled)
    changed["spec"]["template"]["resourceSharing"][0]["scope"] = "PerReplica"
    answered = _answered(validator, orjson.dumps(pcs_review(changed, operation="UPDATE", old=WORKLOAD)))
    assert answered["response"]["allowed"] is False and len(passes) == 1
    assert "spec.template.resourceSharing: Invalid value" in answered["response"]["status"]["message"]


def _answered(validator: PodCliqueSetValidator, body: bytes) -> Any:
    coroutine = answer(validator, "validate-podcliqueset", body)
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value.body
    raise AssertionError("the validator waited")


SHARED = PodCliqueSetValidator()
"""One validator for every example below: its memory fills with everything the examples send."""


@pytest.mark.parametrize("example", PCS_EXAMPLES)
@settings(FUZZ, max_examples=15)
@given(data=st.data())
def test_a_validator_that_remembers_answers_as_a_fresh_one(example: str, data: st.DataObject) -> None:
    body = dumps(data.draw(mutated(EXAMPLES[example], max_changes=2, depths=(64, 300))))
    assert _answered(SHARED, body) == validated(body).body
