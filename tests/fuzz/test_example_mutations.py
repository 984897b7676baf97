"""The example reviews of ``examples/admission/`` with members deleted, renamed, duplicated, nulled,
retyped, wrapped or nested deep: every answer is still well formed, and a pod patch is one the API
server can apply to the pod it was computed for, adds without taking anything away, and is the
last (the patched pod gets no patch)."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import orjson
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from fuzz.answers import FUZZ, MUTATE, VALIDATE, checked, patch_of, post
from fuzz.strategies import EXAMPLES, PCS_EXAMPLES, POD_EXAMPLES, Nested, dumps, mutated, paths, with_device_values


def kept(original: Any, patched: Any) -> bool:
    """Whether ``patched`` still holds every member of ``original`` with its value. Only what a
    patch may fill in can differ: ``null`` replaced by anything, an empty list or object replaced
    by a longer one; lists may have grown at their end."""
    if original is None:
        return True
    if type(original) is not type(patched):
        return False
    if isinstance(original, dict):
        return all(key in patched and kept(value, patched[key]) for key, value in original.items())
    if isinstance(original, list):
        return len(patched) >= len(original) and all(kept(a, b) for a, b in zip(original, patched))
    return bool(original == patched)


def again(document: dict[str, Any], pod: Any) -> dict[str, Any]:
    second = copy.deepcopy(document)
    second["request"]["object"] = pod
    return second


def check_pod_review(body: bytes) -> None:
    payload = checked(body, post(MUTATE, body))
    if "patch" not in payload.get("response", {}):
        event("not patched")
        return
    event("patched")
    sent = orjson.loads(body)
    pod = sent["request"]["object"]
    patched = jsonpatch.apply_patch(pod, patch_of(payload))
    assert kept(pod, patched), "the patch changed or removed what the pod had"
    second_body = dumps(again(sent, patched))
    second = checked(second_body, post(MUTATE, second_body))["response"]
    assert (second["allowed"], "patch" in second) == (True, False), second


@pytest.mark.parametrize("example", POD_EXAMPLES)
@settings(FUZZ, max_examples=50)
@given(data=st.data())
def test_mutated_pod_reviews(example: str, data: st.DataObject) -> None:
    check_pod_review(data.draw(mutated(EXAMPLES[example]).map(dumps)))


@pytest.mark.parametrize("example", PCS_EXAMPLES)
@settings(FUZZ, max_examples=10)
@given(data=st.data())
def test_mutated_podcliqueset_reviews(example: str, data: st.DataObject) -> None:
    body = data.draw(mutated(EXAMPLES[example], depths=(64, 300, 1000)).map(dumps))
    checked(body, post(VALIDATE, body))


@pytest.mark.parametrize("example", ["pcs-create-valid.json", "pcs-update-replicas-allowed.json", "pcs-update-u1-templates-immutable.json"])
@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_podcliqueset_reviews_with_fuzzed_device_values(example: str, data: st.DataObject) -> None:
    body = data.draw(with_device_values(EXAMPLES[example]).map(dumps))
    checked(body, post(VALIDATE, body))


@pytest.mark.parametrize("example", [*POD_EXAMPLES, *PCS_EXAMPLES])
@settings(FUZZ, max_examples=4)
@given(data=st.data())
def test_reviews_sent_to_the_other_webhook(example: str, data: st.DataObject) -> None:
    """A misrouted review is answered, not decided."""
    body = data.draw(mutated(EXAMPLES[example], max_changes=1).map(dumps))
    checked(body, post(VALIDATE if example.startswith("pod-") else MUTATE, body))


@pytest.mark.parametrize("example", ["pcs-update-replicas-allowed.json", "pod-worker-b.json"])
def test_a_value_nested_deep_in_any_member_of_the_objects_is_answered(example: str) -> None:
    """Every member of ``object`` and ``oldObject`` in turn holds a value nested 300 levels deep in
    objects (more than orjson writes) or 1000 in arrays (about what Python and orjson read): every
    answer is well formed and none is code 500. An unknown field of a claim template nested 300
    levels deep, which Go ignores, was code 500."""
    review = EXAMPLES[example]
    path = VALIDATE if example.startswith("pcs-") else MUTATE
    for field in ("object", "oldObject"):
        if field not in review["request"]:
            continue
        for location in list(paths(review["request"][field]))[1:]:
            for deep in (Nested(300, 1, objects=True), Nested(1000, 1)):
                document = copy.deepcopy(review)
                parent = document["request"][field]
                for part in location[:-1]:
                    parent = parent[part]
                parent[location[-1]] = deep
                body = dumps(document)
                checked(body, post(path, body))
