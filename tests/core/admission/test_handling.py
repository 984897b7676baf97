"""The seam every webhook answers through: decoded once, answered in one place."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from webhook.core.admission import response
from webhook.core.admission.handling import answer
from webhook.core.admission.request import AdmissionRequest
from webhook.core.model.meta import GroupVersionKind

KIND = GroupVersionKind("grove.io", "v1alpha1", "PodCliqueSet")


class Recording:
    """A handler that remembers what it was asked and answers as told (or raises)."""

    kind = KIND
    objects = None

    def __init__(self, answer: response.AdmissionResponse | Exception) -> None:
        self.answer = answer
        self.requests: list[AdmissionRequest] = []

    async def handle(self, request: AdmissionRequest) -> response.AdmissionResponse:
        self.requests.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def review(**request: Any) -> bytes:
    base = {"uid": "u-1", "operation": "CREATE", "namespace": "team", "name": "p", "kind": {"group": "grove.io", "version": "v1alpha1", "kind": "PodCliqueSet"}}
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {**base, **request}})


@pytest.mark.parametrize(
    ("decided", "outcome"),
    [
        (response.allowed(["w"]), "allowed"),
        (response.patched(b"[]"), "patched"),
        (response.denied("no"), "denied"),
        (response.errored(400, "unreadable"), "error"),
    ],
)
def test_the_handlers_response_is_sent_in_the_version_asked_with_its_outcome(decided: response.AdmissionResponse, outcome: str) -> None:
    handler = Recording(decided)
    got = asyncio.run(answer(handler, "validate-podcliqueset", review()))
    assert (got.status, got.outcome, got.operation, got.uid, got.name) == (200, outcome, "CREATE", "u-1", "team/p")
    assert got.body == {"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "response": decided.body("u-1")}
    assert [r.uid for r in handler.requests] == ["u-1"]


def test_a_handler_that_raises_is_answered_500_with_the_decoded_uid_and_the_error_handed_back() -> None:
    bug = RuntimeError("bug")
    got = asyncio.run(answer(Recording(bug), "validate-podcliqueset", review()))
    assert got.error is bug
    assert got.outcome == "error"
    assert got.body["response"] == {
        "uid": "u-1",
        "allowed": False,
        "status": {"code": 500, "message": "internal error in the validate-podcliqueset webhook; the server log has the details"},
    }


def test_a_review_of_another_kind_is_answered_without_the_handler() -> None:
    handler = Recording(response.allowed())
    got = asyncio.run(answer(handler, "validate-podcliqueset", review(kind={"group": "", "version": "v1", "kind": "Pod"})))
    assert handler.requests == []
    assert got.body["response"]["status"] == {"code": 400, "message": "unable to decode v1, Kind=Pod into grove.io/v1alpha1, Kind=PodCliqueSet"}


def test_an_unusable_body_is_an_http_error_and_the_handler_is_not_asked() -> None:
    handler = Recording(response.allowed())
    got = asyncio.run(answer(handler, "validate-podcliqueset", b'{"request": {}}'))
    assert (got.status, got.outcome, got.body) == (400, "rejected", {"error": "AdmissionReview request has no uid"})
    assert handler.requests == []
