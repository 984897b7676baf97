"""SubjectAccessReviews through the official client against the fake API server: what is asked,
what is answered, how long answers are kept, and how a failing API server is reported."""

from __future__ import annotations

import asyncio
import copy
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fakeapi import FakeApiServer
from kubernetes import client

from webhook.core.pcs.authorization import AccessUnknown, User
from webhook.kube.access import Component, guarded
from webhook.kube.authorization import SubjectAccessReviews

ALICE = User("alice", "uid-1", ("devs", "system:authenticated"), (("scopes", ("a", "b")),))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def single_attempt(api: client.ApiClient) -> client.ApiClient:
    configuration = copy.deepcopy(api.configuration)
    configuration.retries = False
    return guarded(client.ApiClient(configuration), Component.WEBHOOK)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def reviews(kube_api_client: Any, clock: Clock) -> Iterator[SubjectAccessReviews]:
    made = SubjectAccessReviews(single_attempt(kube_api_client), timeout=0.5, clock=clock)
    yield made
    made.close(wait=True)


def ask(reviews: SubjectAccessReviews, *questions: tuple[User, str, str]) -> list[Any]:
    async def asking() -> list[Any]:
        return await asyncio.gather(*(reviews.may_get(*q) for q in questions), return_exceptions=True)

    return asyncio.run(asking())


def test_the_review_names_the_user_as_authenticated_and_the_template(fake_api: FakeApiServer, reviews: SubjectAccessReviews) -> None:
    fake_api.authorization.allow(user="alice", namespace="shared", name="gpu")
    assert ask(reviews, (ALICE, "shared", "gpu"), (ALICE, "shared", "cpu")) == [True, False]
    asked = {r["resourceAttributes"]["name"]: r for r in fake_api.authorization.reviews}  # sent at once: any order
    assert asked["gpu"] == {
        "user": "alice",
        "uid": "uid-1",
        "groups": ["devs", "system:authenticated"],
        "extra": {"scopes": ["a", "b"]},
        "resourceAttributes": {"namespace": "shared", "verb": "get", "group": "resource.k8s.io",
                               "resource": "resourceclaimtemplates", "name": "gpu"},
    }
    assert fake_api.requests.count("POST", r"^/apis/authorization.k8s.io/v1/subjectaccessreviews$") == 2


def test_a_group_may_be_what_allows(fake_api: FakeApiServer, reviews: SubjectAccessReviews) -> None:
    fake_api.authorization.allow(group="devs", namespace="shared")
    assert ask(reviews, (ALICE, "shared", "gpu"), (User("bob", groups=("ops",)), "shared", "gpu")) == [True, False]


def test_answers_are_kept_briefly_per_user_and_template(fake_api: FakeApiServer, reviews: SubjectAccessReviews, clock: Clock) -> None:
    fake_api.authorization.allow(user="alice", namespace="shared", name="gpu")
    other_groups = User("alice", "uid-1", ("devs",), ALICE.extra)
    assert ask(reviews, (ALICE, "shared", "gpu"), (ALICE, "shared", "cpu")) == [True, False]
    assert ask(reviews, (ALICE, "shared", "gpu"), (ALICE, "shared", "cpu"), (other_groups, "shared", "gpu")) == [True, False, True]
    assert len(fake_api.authorization.reviews) == 3  # only the user with other groups was asked about again
    clock.now += reviews.denied_ttl
    assert ask(reviews, (ALICE, "shared", "gpu"), (ALICE, "shared", "cpu")) == [True, False]
    assert len(fake_api.authorization.reviews) == 4  # the refusal is kept 2 s, the permission 5 s
    clock.now += reviews.allowed_ttl
    assert ask(reviews, (ALICE, "shared", "gpu")) == [True]
    assert len(fake_api.authorization.reviews) == 5


def test_the_same_question_asked_at_once_is_one_review(fake_api: FakeApiServer, reviews: SubjectAccessReviews) -> None:
    fake_api.hold_next("POST", "subjectaccessreviews", 0.2)
    assert ask(reviews, *[(ALICE, "shared", "gpu")] * 5) == [False] * 5
    assert len(fake_api.authorization.reviews) == 1


def test_an_asker_that_gives_up_leaves_the_review_to_the_others(fake_api: FakeApiServer, reviews: SubjectAccessReviews) -> None:
    fake_api.authorization.allow(user="alice", namespace="shared", name="gpu")
    fake_api.hold_next("POST", "subjectaccessreviews", 0.2)

    async def asking() -> list[bool]:
        impatient = asyncio.ensure_future(reviews.may_get(ALICE, "shared", "gpu"))
        patient = [asyncio.ensure_future(reviews.may_get(ALICE, "shared", "gpu")) for _ in range(3)]
        await asyncio.sleep(0)
        impatient.cancel()
        answers = list(await asyncio.gather(*patient))
        return answers + [await reviews.may_get(ALICE, "shared", "gpu")]

    assert asyncio.run(asking()) == [True] * 4
    assert len(fake_api.authorization.reviews) == 1


def test_several_templates_are_asked_about_at_once(fake_api: FakeApiServer, kube_api_client: Any) -> None:
    reviews = SubjectAccessReviews(single_attempt(kube_api_client), timeout=10)
    fake_api.hold_next("POST", "subjectaccessreviews", 1.0, times=4)
    try:
        began = time.monotonic()
        assert ask(reviews, *[(ALICE, "shared", f"t{i}") for i in range(4)]) == [False] * 4
        assert time.monotonic() - began < 3.0  # one after the other: 4 s
    finally:
        reviews.close(wait=True)


def test_the_cache_is_bounded(fake_api: FakeApiServer, kube_api_client: Any) -> None:
    reviews = SubjectAccessReviews(single_attempt(kube_api_client), size=2)
    try:
        ask(reviews, *[(User(f"user-{i}"), "shared", "gpu") for i in range(5)])
        assert len(reviews.answers) == 2
    finally:
        reviews.close(wait=True)


def test_an_error_answer_is_reported_and_not_kept(fake_api: FakeApiServer, reviews: SubjectAccessReviews) -> None:
    fake_api.fail_next("POST", "subjectaccessreviews", 500, "InternalError", message="etcd is down")
    [failed] = ask(reviews, (ALICE, "shared", "gpu"))
    assert isinstance(failed, AccessUnknown) and str(failed) == "API error 500: etcd is down"
    assert ask(reviews, (ALICE, "shared", "gpu")) == [False]


def test_no_answer_in_time_is_reported_at_the_bound_and_sent_once(fake_api: FakeApiServer, reviews: SubjectAccessReviews) -> None:
    fake_api.hold_next("POST", "subjectaccessreviews", 5.0)
    began = time.monotonic()
    [failed] = ask(reviews, (ALICE, "shared", "gpu"))
    assert time.monotonic() - began < 1.5
    assert isinstance(failed, AccessUnknown) and str(failed) == "the API server did not answer within 0.5 s"
    reviews.close(wait=True)
    assert fake_api.requests.count("POST", "subjectaccessreviews") == 1


def test_an_unreachable_api_server_is_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{port}"
    reviews = SubjectAccessReviews(single_attempt(client.ApiClient(configuration)))
    try:
        [failed] = ask(reviews, (ALICE, "shared", "gpu"))
    finally:
        reviews.close(wait=True)
    assert isinstance(failed, AccessUnknown)
    assert str(failed).startswith("cannot connect to the API server:"), str(failed)
