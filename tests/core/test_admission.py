"""The seam every webhook answers through: decoded once, dispatched as controller-runtime does, answered in one place."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from webhook.core import admission
from webhook.core.admission import AdmissionRequest, AdmissionResponse, answer
from webhook.core.model.meta import GroupVersionKind

KIND = GroupVersionKind("grove.io", "v1alpha1", "PodCliqueSet")


class Recording:
    """A validator that remembers what it was asked and answers as told (or raises)."""

    kind = KIND

    def __init__(self, answer: AdmissionResponse | Exception) -> None:
        self.answer = answer
        self.requests: list[tuple[str, AdmissionRequest]] = []

    def read(self, obj: Any) -> Any:
        return obj

    async def _answered(self, method: str, request: AdmissionRequest) -> AdmissionResponse:
        self.requests.append((method, request))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    async def create(self, request: AdmissionRequest, obj: Any) -> AdmissionResponse:
        return await self._answered("create", request)

    async def update(self, request: AdmissionRequest, obj: Any, old: Any) -> AdmissionResponse:
        return await self._answered("update", request)

    async def delete(self, request: AdmissionRequest, old: Any) -> AdmissionResponse:
        return await self._answered("delete", request)


def review(**request: Any) -> bytes:
    base = {"uid": "u-1", "operation": "CREATE", "namespace": "team", "name": "p", "kind": {"group": "grove.io", "version": "v1alpha1", "kind": "PodCliqueSet"}, "object": {}}
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {**base, **request}})


@pytest.mark.parametrize(
    ("decided", "outcome"),
    [
        (admission.allowed(["w"]), "allowed"),
        (admission.patched(b"[]"), "patched"),
        (admission.denied(["no"]), "denied"),
        (admission.errored(400, "unreadable"), "error"),
    ],
)
def test_the_webhooks_response_is_sent_in_the_version_asked_with_its_outcome(decided: AdmissionResponse, outcome: str) -> None:
    handler = Recording(decided)
    got = asyncio.run(answer(handler, "validate-podcliqueset", review()))
    assert (got.status, got.outcome, got.operation, got.uid, got.name) == (200, outcome, "CREATE", "u-1", "team/p")
    assert got.body == {"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "response": decided.body("u-1")}
    assert [(method, r.uid) for method, r in handler.requests] == [("create", "u-1")]


@pytest.mark.parametrize(
    ("request_", "asked", "status"),
    [
        pytest.param({"operation": "CREATE"}, ["create"], {"code": 200}, id="create"),
        pytest.param({"operation": "UPDATE", "oldObject": {}}, ["update"], {"code": 200}, id="update"),
        pytest.param({"operation": "DELETE", "object": None, "oldObject": {}}, ["delete"], {"code": 200}, id="delete"),
        pytest.param({"operation": "CONNECT"}, [], {"code": 200}, id="connect-allowed"),
        pytest.param({"operation": "PATCH"}, [], {"code": 400, "message": 'unknown operation "PATCH"'}, id="unknown-operation"),
        pytest.param({"object": None}, [], {"code": 400, "message": "there is no content to decode: request.object is missing"}, id="no-object"),
    ],
)
def test_a_validator_is_asked_by_operation(request_: dict[str, Any], asked: list[str], status: dict[str, Any]) -> None:
    handler = Recording(admission.allowed())
    got = asyncio.run(answer(handler, "validate-podcliqueset", review(**request_)))
    assert [method for method, _ in handler.requests] == asked
    assert got.body["response"]["status"] == status


def test_a_webhook_that_raises_is_answered_500_with_the_decoded_uid_and_the_error_handed_back() -> None:
    bug = RuntimeError("bug")
    got = asyncio.run(answer(Recording(bug), "validate-podcliqueset", review()))
    assert got.error is bug
    assert got.outcome == "error"
    assert got.body["response"] == {
        "uid": "u-1",
        "allowed": False,
        "status": {"code": 500, "message": "internal error in the validate-podcliqueset webhook; the server log has the details"},
    }


def test_a_review_of_another_kind_is_answered_without_the_webhook() -> None:
    handler = Recording(admission.allowed())
    got = asyncio.run(answer(handler, "validate-podcliqueset", review(kind={"group": "", "version": "v1", "kind": "Pod"})))
    assert handler.requests == []
    assert got.body["response"]["status"] == {"code": 400, "message": "unable to decode v1, Kind=Pod into grove.io/v1alpha1, Kind=PodCliqueSet"}


def test_an_unusable_body_is_an_http_error_and_the_webhook_is_not_asked() -> None:
    handler = Recording(admission.allowed())
    got = asyncio.run(answer(handler, "validate-podcliqueset", b'{"request": {}}'))
    assert (got.status, got.outcome, got.body) == (400, "rejected", {"error": "AdmissionReview request has no uid"})
    assert handler.requests == []
