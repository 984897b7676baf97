"""A review decoded no further than its webhook reads it (``admission.envelope``) is answered as the
body decoded whole is: the example reviews with members deleted, renamed, duplicated, nulled,
retyped or nested deep, damaged bodies, and the bodies msgspec and orjson read apart (text that
is not ASCII, numbers past a double's range, a spec that is not an object)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.answers import FUZZ
from fuzz.strategies import EXAMPLES, OBJECTS, PCS_EXAMPLES, POD_EXAMPLES, damaged, dumps, mutated
from webhook.core.admission.handling import Answer, Handler, answer, answer_review
from webhook.core.admission.request import AdmissionReview, decode
from webhook.core.pcs.handler import PodCliqueSetValidator
from webhook.core.pod.handler import PodMutator
from webhook.stores import EmbeddedStore

STORE = EmbeddedStore([OBJECTS])
STORE.load()


def handlers(example: str) -> tuple[Handler, Handler]:
    """The example's webhook twice: as served, and reading every body whole."""
    made: list[Any] = [PodMutator(STORE) for _ in range(2)] if example.startswith("pod-") else [PodCliqueSetValidator() for _ in range(2)]
    made[1].objects = None
    return made[0], made[1]


def answers(example: str, body: bytes) -> tuple[Answer, Answer]:
    parts, whole = handlers(example)
    return asyncio.run(answer(parts, "webhook", body)), asyncio.run(answer(whole, "webhook", body))


def same(example: str, body: bytes) -> Answer:
    parts, whole = answers(example, body)
    assert (parts.status, parts.body) == (whole.status, whole.body)
    return parts


def read_in_parts(example: str, body: bytes) -> Answer:
    """The answer to ``body`` read in parts, with no way back to the whole body: raises when the
    body is not read in parts or a member kept as text is sent back (``DecodeWhole``). Equal to the
    answer to the body decoded whole."""
    parts, whole = handlers(example)
    review = decode(body, parts.objects)
    assert isinstance(review, AdmissionReview) and review.request.typed, "the body was decoded whole"
    answered = asyncio.run(answer_review(parts, "webhook", review))
    decided = asyncio.run(answer(whole, "webhook", body))
    assert (answered.status, answered.body) == (decided.status, decided.body)
    return answered


@pytest.mark.parametrize("example", [*POD_EXAMPLES, *PCS_EXAMPLES])
def test_every_example_review_is_read_in_parts(example: str) -> None:
    read_in_parts(example, dumps(EXAMPLES[example]))


@pytest.mark.parametrize("example", [*POD_EXAMPLES, *PCS_EXAMPLES])
@settings(FUZZ, max_examples=25)
@given(data=st.data())
def test_a_mutated_review_is_answered_as_the_whole_body_decoded(example: str, data: st.DataObject) -> None:
    same(example, data.draw(mutated(EXAMPLES[example]).map(dumps)))


@pytest.mark.parametrize("example", ["pod-worker-a.json", "pcs-update-replicas-allowed.json"])
@settings(FUZZ, max_examples=50)
@given(data=st.data())
def test_a_damaged_body_is_answered_as_the_whole_body_decoded(example: str, data: st.DataObject) -> None:
    same(example, data.draw(damaged(dumps(EXAMPLES[example]))))


def with_member(example: str, where: tuple[str | int, ...], text: bytes) -> bytes:
    """The example's body with the JSON ``text`` at ``where`` (text orjson could not write)."""
    document = orjson.loads(dumps(EXAMPLES[example]))
    parent = document
    for part in where[:-1]:
        parent = parent[part]
    parent[where[-1]] = "PLACEHOLDER"
    return dumps(document).replace(b'"PLACEHOLDER"', text)


SPEC = ("request", "object", "spec")
CLIQUE = (*SPEC, "template", "cliques", 0)


@pytest.mark.parametrize(
    ("example", "where", "text"),
    [
        ("pcs-create-valid.json", (*CLIQUE, "spec", "replicas"), b"1e400"),
        ("pcs-create-valid.json", (*CLIQUE, "spec", "replicas"), b"1" + b"0" * 400),
        ("pcs-create-valid.json", ("request", "object", "metadata", "generation"), b"-1e400"),
        ("pcs-update-replicas-allowed.json", ("request", "oldObject", "spec", "replicas"), b"1e400"),
        ("pcs-create-valid.json", (*CLIQUE, "name"), '"cliqué"'.encode()),
        ("pod-worker-a.json", ("request", "object", "metadata", "labels", "team"), b"1e400"),
        ("pod-worker-a.json", ("request", "object", "metadata", "labels", "team"), '"équipe"'.encode()),
    ],
)
def test_what_orjson_refuses_in_a_member_read_is_refused_with_its_message(example: str, where: tuple[str | int, ...], text: bytes) -> None:
    answered = same(example, with_member(example, where, text))
    if text.isascii():
        assert answered.status == 400 and answered.body["error"].startswith("request body is not valid JSON: number is infinity")
    else:
        assert answered.status == 200


@pytest.mark.parametrize(
    ("example", "where", "in_parts"),
    [
        # A PodCliqueSet whose metadata is unusual, its spec decoded in parts: read again whole.
        ("pcs-create-valid.json", ("request", "object", "metadata", "name"), False),
        ("pcs-create-valid.json", ("request", "object", "metadata", "labels", "app"), False),
        ("pcs-update-replicas-allowed.json", ("request", "oldObject", "metadata", "uid"), False),
        ("pcs-create-valid.json", ("request", "userInfo", "username"), True),
        ("pod-worker-a.json", ("request", "userInfo", "uid"), True),
        # Where a pod has text, msgspec refuses a number: the body is decoded whole.
        ("pod-worker-a.json", ("request", "object", "metadata", "name"), False),
    ],
)
@pytest.mark.parametrize("number", [b"1" + b"0" * 30, b"-1" + b"0" * 400])
def test_an_integer_past_64_bits_where_text_is_read_is_answered_as_decoded_whole(
    example: str, where: tuple[str | int, ...], in_parts: bool, number: bytes
) -> None:
    """orjson reads such an integer as a float (past a double's range, refuses it), msgspec as an
    integer: the members read as any JSON are left to orjson, and the answer is the same."""
    body = with_member(example, where, number)
    if len(number) > 100:
        assert same(example, body).status == 400
    elif in_parts:
        read_in_parts(example, body)
    else:
        same(example, body)


@pytest.mark.parametrize("spec", [b"null", b'"a spec"', b"[]", b"{}", b'{"template": null}'])
def test_a_spec_that_is_no_object_is_read_by_the_schema_as_before(spec: bytes) -> None:
    same("pcs-create-valid.json", with_member("pcs-create-valid.json", SPEC, spec))


@pytest.mark.parametrize(
    ("example", "where", "outcome"),
    [
        ("pod-worker-a.json", ("request", "object", "spec", "containers", 0, "image"), "patched"),
        # A clique's pod template is skipped when the spec is read (``model.reader``).
        ("pcs-create-valid.json", (*CLIQUE, "spec", "podSpec", "containers", 0, "image"), "allowed"),
    ],
)
def test_a_number_past_a_doubles_range_in_a_member_no_webhook_reads_is_not_refused(
    example: str, where: tuple[str | int, ...], outcome: str
) -> None:
    """As Go's decoder, which checks the members it ignores for their syntax only (orjson read the
    whole body, and refused it)."""
    body = with_member(example, where, b"1e400")
    parts, whole = answers(example, body)
    assert whole.status == 400
    assert parts.status == 200 and parts.outcome == outcome
    read_in_parts(example, body.replace(b"1e400", b'"image"'))
