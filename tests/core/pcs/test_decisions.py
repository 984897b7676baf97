"""What the validating webhook remembers: the specs it read, by their JSON, and what each says. A
spec seen before is neither read nor checked again whatever the PodCliqueSet is called or whatever
else a write changed, and the answers are the ones a fresh validator gives."""

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
from core.podcliquesets import pcs_review, workload
from webhook.core.admission.handling import answer
from webhook.core.pcs import handler
from webhook.core.pcs.handler import PodCliqueSetValidator

WORKLOAD = workload()


def noise(obj: dict[str, Any], n: int) -> dict[str, Any]:
    """The same PodCliqueSet under another name, after a write that changed nothing of its spec."""
    obj = copy.deepcopy(obj)
    obj["metadata"].update(
        {"name": f"pcs-{n}", "uid": f"uid-{n}", "resourceVersion": str(n), "generation": n, "managedFields": [{"manager": f"m{n}"}],
         "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": str(n)}]}
    )
    obj["status"] = {"observedGeneration": n}
    return obj


def test_a_spec_is_read_and_checked_once_whatever_the_podcliqueset_is_called() -> None:
    validator = PodCliqueSetValidator()
    first = validator.read(noise(WORKLOAD, 1))
    others = [validator.read(noise(WORKLOAD, n)) for n in range(2, 6)]
    assert [other.spec is first.spec for other in others] == [True] * 4
    assert [other.name for other in others] == ["pcs-2", "pcs-3", "pcs-4", "pcs-5"]
    scaled = copy.deepcopy(WORKLOAD)
    scaled["spec"]["replicas"] = 3
    assert validator.read(scaled).spec is not first.spec


def test_unreadable_metadata_is_refused_whatever_the_spec() -> None:
    """A uid that is not a string makes the object unreadable, as Go's decoder finds, though its
    spec was read before."""
    validator = PodCliqueSetValidator()
    validator.read(WORKLOAD)
    broken = copy.deepcopy(WORKLOAD)
    broken["metadata"]["uid"] = 7
    answered = _answered(validator, orjson.dumps(pcs_review(broken)))
    assert answered["response"]["status"]["code"] == 400
    assert "metadata.uid: " in answered["response"]["status"]["message"]


def test_an_update_that_changes_no_spec_runs_no_immutability_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    passes: list[Any] = []
    real = handler.validate_update
    monkeypatch.setattr(handler, "validate_update", lambda new, old, *texts: passes.append(new) or real(new, old, *texts))
    validator = PodCliqueSetValidator()
    answered = _answered(validator, orjson.dumps(pcs_review(noise(WORKLOAD, 2), operation="UPDATE", old=noise(WORKLOAD, 1))))
    assert answered["response"]["allowed"] is True and passes == []
    changed = copy.deepcopy(WORKLOAD)
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
