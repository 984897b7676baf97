"""What every answer of the webhooks must be, whatever was sent (DECISIONS.md §2), and the app that is
asked: the one ``make run`` serves (the embedded store of ``examples/objects/``), in-process."""

from __future__ import annotations

import base64
import time
from typing import Any

import httpx
import orjson
from hypothesis import HealthCheck, settings
from server.asgi import call

from fuzz.strategies import OBJECTS
from webhook.core.gocompat.gojson import go_text
from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

VALIDATE = "/webhooks/validate-podcliqueset"
MUTATE = "/webhooks/mutate-pod"
WEBHOOKS = (VALIDATE, MUTATE)
API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
"""The same examples on every run and machine (no example database), so CI is deterministic; no
per-example deadline (a slow example is a finding of its own test, not a flaky failure)."""


def served_app(**options: Any) -> Any:
    store = EmbeddedStore([OBJECTS])
    store.load()
    return create_app(ServeSettings(**options), store)


APP = served_app()


SLOW = 5.0
"""Seconds no answer may take: a hundred times a large review's, so only work that grows faster
than the body (a regular expression backtracking, say) reaches it."""


def post(path: str, body: bytes, app: Any = APP) -> httpx.Response:
    started = time.perf_counter()
    response = call(app, "POST", path, body, {"content-type": "application/json"})
    elapsed = time.perf_counter() - started
    assert elapsed < SLOW, f"{elapsed:.1f} s to answer a body of {len(body)} bytes"
    return response


def echoed(body: bytes) -> tuple[str, str] | None:
    """(apiVersion, uid) an answer must echo, or None when the body is no AdmissionReview with a
    request uid and must get HTTP 400 ``{"error": ...}``. Text that is not UTF-8, or a lone surrogate
    escape, is read as Go reads it (U+FFFD)."""
    try:
        data = orjson.loads(go_text(body))
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    api_version, kind, request = data.get("apiVersion", API_VERSIONS[0]), data.get("kind", "AdmissionReview"), data.get("request")
    if api_version not in API_VERSIONS or kind != "AdmissionReview" or not isinstance(request, dict):
        return None
    uid = request.get("uid")
    return (api_version, uid) if isinstance(uid, str) and uid else None


def assert_one_line_error(payload: Any) -> None:
    assert isinstance(payload, dict) and list(payload) == ["error"], payload
    message = payload["error"]
    assert isinstance(message, str) and message, payload
    assert "\n" not in message and "\r" not in message, message
    assert len(message) < 500, f"an error echoing its input: {message[:200]}..."


def checked(body: bytes, response: httpx.Response) -> dict[str, Any]:
    """The answer's JSON, after asserting what every answer to ``body`` must be: HTTP 200 with an
    AdmissionReview echoing the request's apiVersion and uid, decided (never code 500), or HTTP 400
    with a one-line error when there is no request to answer."""
    assert response.headers["content-type"] == "application/json"
    payload: dict[str, Any] = orjson.loads(response.content)
    identity = echoed(body)
    if identity is None or response.status_code == 400:
        assert response.status_code == 400, (response.status_code, payload)
        assert_one_line_error(payload)
        if identity is not None:
            assert payload["error"].startswith("AdmissionReview is malformed: "), payload
        return payload
    assert response.status_code == 200, (response.status_code, payload)
    api_version, uid = identity
    assert (payload["apiVersion"], payload["kind"]) == (api_version, "AdmissionReview")
    answer = payload["response"]
    assert answer["uid"] == uid
    assert answer["allowed"] in (True, False)
    if answer["allowed"]:
        assert answer["status"] == {"code": 200}, answer
    else:
        assert answer["status"]["code"] in (400, 403), answer
        assert isinstance(answer["status"]["message"], str) and answer["status"]["message"], answer
    if "patch" in answer:
        assert answer["patchType"] == "JSONPatch"
        assert isinstance(patch_of(payload), list)
    return payload


def patch_of(payload: dict[str, Any]) -> list[dict[str, Any]]:
    operations: list[dict[str, Any]] = orjson.loads(base64.b64decode(payload["response"]["patch"], validate=True))
    return operations
