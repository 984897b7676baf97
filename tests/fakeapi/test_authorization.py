"""The fake API server's SubjectAccessReviews and held requests, through the official client."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from fakeapi import FakeApiServer, wait_until


def review(user: str = "", groups: list[str] | None = None, namespace: str = "shared", name: str = "gpu",
           verb: str = "get") -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceAttributes": {"namespace": namespace, "verb": verb, "group": "resource.k8s.io",
                                                   "resource": "resourceclaimtemplates", "name": name}}
    if user:
        spec["user"] = user
    if groups:
        spec["groups"] = groups
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}


def allowed(api: Any, body: dict[str, Any]) -> bool:
    answer = k8s.AuthorizationV1Api(api).create_subject_access_review(body, _preload_content=False)
    assert answer.status == 201
    return bool(json.loads(answer.data)["status"]["allowed"])


def test_nothing_is_allowed_until_granted_to_a_user_or_a_group(fake_api: FakeApiServer, kube_api_client: Any) -> None:
    assert not allowed(kube_api_client, review("alice"))
    fake_api.authorization.allow(user="alice", namespace="shared", name="gpu")
    fake_api.authorization.allow(group="devs", namespace="other")
    assert allowed(kube_api_client, review("alice"))
    assert not allowed(kube_api_client, review("alice", name="cpu"))
    assert not allowed(kube_api_client, review("alice", verb="list"))
    assert allowed(kube_api_client, review("bob", ["devs"], namespace="other", name="any"))
    assert not allowed(kube_api_client, review("bob", ["devs"]))
    assert [r["user"] for r in fake_api.authorization.reviews] == ["alice"] * 4 + ["bob"] * 2


def test_a_policy_decides_instead_and_a_reset_forgets_all(fake_api: FakeApiServer, kube_api_client: Any) -> None:
    fake_api.authorization.set_policy(lambda spec: spec["resourceAttributes"]["name"] == "gpu")
    assert allowed(kube_api_client, review("alice")) and not allowed(kube_api_client, review("alice", name="cpu"))
    fake_api.reset()
    assert fake_api.authorization.reviews == []
    assert not allowed(kube_api_client, review("alice"))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (review(), 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: '
                   "'': at least one of user or group must be specified"),
        ({"spec": {"user": "alice"}}, 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
                                      "Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified"),
    ],
    ids=["no-user-or-group", "no-attributes"],
)
def test_an_unusable_review_is_422(fake_api: FakeApiServer, kube_api_client: Any, body: dict[str, Any], message: str) -> None:
    with pytest.raises(ApiException) as refused:
        allowed(kube_api_client, body)
    assert refused.value.status == 422
    assert json.loads(refused.value.body)["message"] == message
    assert fake_api.authorization.reviews == []


def test_a_held_request_is_served_late_or_at_once_when_the_faults_are_cleared(fake_api: FakeApiServer, kube_api_client: Any) -> None:
    fake_api.hold_next("POST", "subjectaccessreviews$", 0.3)
    began = time.monotonic()
    assert not allowed(kube_api_client, review("alice"))
    assert time.monotonic() - began >= 0.3
    fake_api.hold_next("POST", "subjectaccessreviews$", 60)
    answers: list[bool] = []
    asking = threading.Thread(target=lambda: answers.append(allowed(kube_api_client, review("alice"))))
    asking.start()
    wait_until(lambda: fake_api.requests.count("POST", "subjectaccessreviews") == 2, message="the second review held")
    fake_api.faults.clear()
    asking.join(10)
    assert answers == [False]
