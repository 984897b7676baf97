"""POST /webhooks/validate-podcliqueset: decisions and every malformed input (DECISIONS.md §2)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from server.asgi import call, chunks
from server.memorystore import MemoryStore
from server.reviews import (
    BAD_SCOPE_MESSAGE,
    VALIDATE,
    bad_scope_pcs,
    body,
    review,
    workload_pcs,
)
from webhook.server.app import create_app
from webhook.settings import ServeSettings

UID = "705ab4f5-6393-11e8-b7cc-42010a800002"


def app(**settings: Any) -> Any:
    return create_app(ServeSettings(**settings), MemoryStore())


def post(content: Any, **settings: Any) -> tuple[int, Any]:
    response = call(app(**settings), "POST", VALIDATE, content)
    assert response.headers["content-type"] == "application/json"
    return response.status_code, response.json()


def answer(response: dict[str, Any], api_version: str = "admission.k8s.io/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": {"uid": UID, **response}}


ALLOWED = {"allowed": True, "status": {"code": 200}}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(review(workload_pcs()), answer(ALLOWED), id="valid-create-allowed"),
        pytest.param(
            review(bad_scope_pcs()),
            answer({"allowed": False, "status": {"code": 403, "reason": "Forbidden", "message": BAD_SCOPE_MESSAGE}}),
            id="bad-scope-denied",
        ),
        pytest.param(
            review(workload_pcs(), api_version="admission.k8s.io/v1beta1"),
            answer(ALLOWED, "admission.k8s.io/v1beta1"),
            id="v1beta1-answered-in-v1beta1",
        ),
        pytest.param(
            review(workload_pcs(), operation="UPDATE", old=workload_pcs()), answer(ALLOWED), id="update-unchanged-allowed"
        ),
        pytest.param(review(operation="DELETE", old=bad_scope_pcs()), answer(ALLOWED), id="delete-allowed-untouched"),
        pytest.param(review(operation="CONNECT"), answer(ALLOWED), id="connect-allowed-untouched"),
        pytest.param(
            review(workload_pcs(), operation="PATCH"),
            answer({"allowed": False, "status": {"code": 400, "message": 'unknown operation "PATCH"'}}),
            id="unknown-operation",
        ),
        pytest.param(
            review({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, kind={"group": "", "version": "v1", "kind": "Pod"}),
            answer(
                {
                    "allowed": False,
                    "status": {"code": 400, "message": "unable to decode v1, Kind=Pod into grove.io/v1alpha1, Kind=PodCliqueSet"},
                }
            ),
            id="wrong-object-kind",
        ),
    ],
)
def test_decisions_are_answered_with_http_200(data: Any, expected: dict[str, Any]) -> None:
    assert post(body(data)) == (200, expected)


def test_an_undecodable_object_is_answered_not_allowed_with_code_400() -> None:
    pcs = workload_pcs()
    pcs["spec"]["replicas"] = "two"
    status, data = post(body(review(pcs)))
    assert status == 200
    assert data["response"]["uid"] == UID
    assert data["response"]["allowed"] is False
    assert data["response"]["status"]["code"] == 400
    assert data["response"]["status"]["message"].startswith(
        "cannot decode request.object as grove.io/v1alpha1, Kind=PodCliqueSet: spec.replicas"
    )


@pytest.mark.parametrize(
    ("content", "error"),
    [
        pytest.param(b"{not json", "request body is not valid JSON", id="not-json"),
        pytest.param(b"", "request body is empty: expected an AdmissionReview", id="empty-body"),
        pytest.param(b"[1, 2]", "request body must be a JSON object (an AdmissionReview)", id="json-array"),
        pytest.param(b'"review"', "request body must be a JSON object (an AdmissionReview)", id="json-string"),
        pytest.param(body({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}), "AdmissionReview has no request", id="no-request"),
        pytest.param(body({**review(workload_pcs()), "request": {"operation": "CREATE"}}), "AdmissionReview request has no uid", id="no-uid"),
        pytest.param(
            body(review(workload_pcs(), api_version="admission.k8s.io/v2")),
            'unsupported AdmissionReview apiVersion "admission.k8s.io/v2"',
            id="wrong-review-api-version",
        ),
        pytest.param(
            body({**review(workload_pcs()), "kind": "ConversionReview"}),
            'unsupported kind "ConversionReview": expected AdmissionReview',
            id="wrong-review-kind",
        ),
    ],
)
def test_unusable_bodies_get_400_with_one_sentence(content: bytes, error: str) -> None:
    status, data = post(content)
    assert status == 400
    assert list(data) == ["error"]
    assert data["error"].startswith(error)


def test_a_body_over_the_limit_by_content_length_gets_413() -> None:
    response = call(app(max_body_bytes=1000), "POST", VALIDATE, b" " * 1001)
    assert response.status_code == 413
    assert response.json() == {"error": "request body is larger than the limit of 1000 bytes"}
    assert response.headers["connection"] == "close"


def test_a_streamed_body_over_the_limit_gets_413_while_it_is_read() -> None:
    data = body(review(workload_pcs()))
    response = call(app(max_body_bytes=len(data) - 1), "POST", VALIDATE, chunks(data, 512))
    assert response.status_code == 413


def test_a_streamed_body_within_the_limit_is_decided() -> None:
    data = body(review(workload_pcs()))
    response = call(app(max_body_bytes=len(data)), "POST", VALIDATE, chunks(data, 512))
    assert (response.status_code, response.json()) == (200, answer(ALLOWED))


def test_an_internal_error_is_logged_with_the_uid_and_answered_not_allowed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(self: Any, pcs: Any) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr("webhook.core.pcs.validator.PodCliqueSetValidator.validate", broken)
    with caplog.at_level(logging.ERROR):
        status, data = post(body(review(workload_pcs())))
    assert status == 200
    assert data == answer(
        {
            "allowed": False,
            "status": {"code": 500, "message": "internal error in the validate-podcliqueset webhook; the server log has the details"},
        }
    )
    assert UID in caplog.text
    assert "RuntimeError: bug" in caplog.text


def test_get_on_the_webhook_path_is_405_not_500() -> None:
    assert call(app(), "GET", VALIDATE).status_code == 405


def test_strict_turns_warnings_into_denials() -> None:
    pcs = workload_pcs()
    pcs["metadata"]["name"] = "rs-test-with-a-name-too-long-for-the-claims-it-shares"
    _, lenient = post(body(review(pcs)))
    _, strict = post(body(review(pcs)), strict=True)
    assert lenient["response"]["allowed"] is True
    assert lenient["response"]["warnings"]
    assert strict["response"]["allowed"] is False
    assert "warnings" not in strict["response"]
    for warning in lenient["response"]["warnings"]:
        assert warning in strict["response"]["status"]["message"]
