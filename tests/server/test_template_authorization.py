"""``webhook serve`` with the cluster store: a PodCliqueSet naming a ResourceClaimTemplate of another
namespace is created only by a user the API server says may get it (DECISIONS.md §3.1). The real
server over TLS, its API server the fake one, whose SubjectAccessReview answers each test sets."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families
from core.podcliquesets import cross_namespace, small
from fakeapi import CuttableProxy, FakeApiServer
from fakeapi.fixtures import fake_api, fake_api_server  # noqa: F401

from server.reviews import VALIDATE, review, workload_pcs
from server.serverproc import Served, serve

EXTERNAL_ENTRY = "spec.template.cliques[0].resourceSharing[1].namespace"
ASKED = {"namespace": "rs-shared", "verb": "get", "group": "resource.k8s.io",
         "resource": "resourceclaimtemplates", "name": "ext-ns-tpl"}


def start(tmp_path: Path, api: FakeApiServer, *args: str) -> Iterator[Served]:
    kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
    with serve(tmp_path, "--kubeconfig", str(kubeconfig), *args) as served:
        yield served


@pytest.fixture(scope="module")
def enforcing(tmp_path_factory: pytest.TempPathFactory, fake_api_server: FakeApiServer) -> Iterator[Served]:
    yield from start(tmp_path_factory.mktemp("enforce"), fake_api_server)


@pytest.fixture(scope="module")
def warning(tmp_path_factory: pytest.TempPathFactory, fake_api_server: FakeApiServer) -> Iterator[Served]:
    yield from start(tmp_path_factory.mktemp("warn"), fake_api_server, "--template-authorization", "warn")


def post(served: Served, pcs: Any, user: dict[str, Any], **options: Any) -> dict[str, Any]:
    """The response to a review of ``pcs`` sent by ``user``. Each test has users of its own: the
    server keeps answers a few seconds."""
    body = review(pcs, **options)
    body["request"]["userInfo"] = user
    with served.client() as client:
        answered = client.post(VALIDATE, content=orjson.dumps(body), headers={"Content-Type": "application/json"})
    assert answered.status_code == 200
    response: dict[str, Any] = answered.json()["response"]
    return response


def templates_exist(fake_api: FakeApiServer) -> None:
    """The workload's external templates, so that no warning says one is missing (DECISIONS.md §3.4)."""
    for namespace, name in (("default", "ext-tpl"), ("rs-shared", "ext-ns-tpl")):
        fake_api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                         "metadata": {"name": name, "namespace": namespace}, "spec": {"spec": {}}})


def test_a_user_who_may_get_the_template_creates_the_podcliqueset(fake_api: FakeApiServer, enforcing: Served) -> None:
    templates_exist(fake_api)
    fake_api.authorization.allow(user="alice", namespace="rs-shared", name="ext-ns-tpl")
    response = post(enforcing, workload_pcs(), {"username": "alice", "uid": "u-1", "groups": ["system:authenticated"]})
    assert response["allowed"] is True and "warnings" not in response
    assert fake_api.authorization.reviews == [
        {"user": "alice", "uid": "u-1", "groups": ["system:authenticated"], "resourceAttributes": ASKED}
    ]


def test_a_user_who_may_not_is_denied_with_the_entry_the_user_and_the_template(fake_api: FakeApiServer, enforcing: Served) -> None:
    fake_api.authorization.allow(user="alice", namespace="rs-shared", name="ext-ns-tpl")
    response = post(enforcing, workload_pcs(), {"username": "mallory", "groups": ["system:authenticated"]})
    assert response["allowed"] is False
    assert response["status"] == {
        "code": 403,
        "reason": "Forbidden",
        "message": f'{EXTERNAL_ENTRY}: Forbidden: user "mallory" may not get ResourceClaimTemplate "rs-shared/ext-ns-tpl"; '
        "a template of another namespace may be used only by users who may read it",
    }


def test_a_group_of_the_user_may_be_what_allows(fake_api: FakeApiServer, enforcing: Served) -> None:
    fake_api.authorization.allow(group="ml-team", namespace="rs-shared")
    assert post(enforcing, workload_pcs(), {"username": "bob", "groups": ["ml-team"]})["allowed"] is True
    assert post(enforcing, workload_pcs(), {"username": "carol", "groups": ["web-team"]})["allowed"] is False


def test_each_template_of_another_namespace_is_asked_about_once_at_every_level(fake_api: FakeApiServer, enforcing: Served) -> None:
    fake_api.authorization.allow(user="dave", namespace="team-b")
    response = post(enforcing, cross_namespace(), {"username": "dave"})
    assert response["status"]["message"] == (
        'spec.template.podCliqueScalingGroups[0].resourceSharing[1].namespace: Forbidden: user "dave" may not get '
        'ResourceClaimTemplate "team-c/ext"; a template of another namespace may be used only by users who may read it'
    )
    asked = sorted((r["resourceAttributes"]["namespace"], r["resourceAttributes"]["name"]) for r in fake_api.authorization.reviews)
    assert asked == [("team-b", "ext"), ("team-b", "ext2"), ("team-c", "ext")]


def own_namespace_only() -> dict[str, Any]:
    pcs = small()
    pcs["spec"]["template"]["resourceSharing"].append({"name": "own", "namespace": "default", "scope": "AllReplicas"})
    return pcs


@pytest.mark.parametrize(
    ("pcs", "options"),
    [
        pytest.param(small(), {}, id="internal-templates"),
        pytest.param(own_namespace_only(), {}, id="a-template-of-its-own-namespace"),
        pytest.param(workload_pcs(), {"operation": "UPDATE", "old": workload_pcs()}, id="update"),
        pytest.param(None, {"operation": "DELETE", "old": workload_pcs()}, id="delete"),
    ],
)
def test_no_review_is_asked_for_without_a_template_of_another_namespace_or_on_other_operations(
    fake_api: FakeApiServer, enforcing: Served, pcs: Any, options: dict[str, Any]
) -> None:
    assert post(enforcing, pcs, {"username": "erin"}, **options)["allowed"] is True
    assert fake_api.authorization.reviews == []
    assert fake_api.requests.count("POST", "subjectaccessreviews") == 0


def test_an_api_server_failing_to_answer_denies(fake_api: FakeApiServer, enforcing: Served) -> None:
    fake_api.fail_next("POST", "subjectaccessreviews", 503, "ServiceUnavailable", message="the authorizer is down")
    response = post(enforcing, workload_pcs(), {"username": "frank"})
    assert response["allowed"] is False
    assert response["status"]["message"] == (
        f'{EXTERNAL_ENTRY}: Forbidden: authorization could not be checked for user "frank" to get ResourceClaimTemplate '
        '"rs-shared/ext-ns-tpl": API error 503: the authorizer is down'
    )
    assert "SubjectAccessReview failed" in enforcing.log_text()


def test_an_api_server_answering_late_denies_within_the_bound(fake_api: FakeApiServer, enforcing: Served) -> None:
    fake_api.hold_next("POST", "subjectaccessreviews", 10.0)
    response = post(enforcing, workload_pcs(), {"username": "grace"})
    assert response["status"]["message"].endswith("the API server did not answer within 2 s")


def test_an_unreachable_api_server_denies(fake_api: FakeApiServer, tmp_path: Path) -> None:
    fake_api.authorization.allow(user="kim", namespace="rs-shared")
    with CuttableProxy((fake_api.host, fake_api.port)) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kubeconfig")
        with serve(tmp_path, "--kubeconfig", str(kubeconfig)) as served:
            assert post(served, workload_pcs(), {"username": "kim"})["allowed"] is True
            proxy.cut()
            response = post(served, workload_pcs(), {"username": "kim", "groups": ["other"]})
    assert response["allowed"] is False
    assert response["status"]["message"].startswith(
        f'{EXTERNAL_ENTRY}: Forbidden: authorization could not be checked for user "kim" to get ResourceClaimTemplate '
        '"rs-shared/ext-ns-tpl": '
    )


def test_warn_admits_with_a_warning_instead(fake_api: FakeApiServer, warning: Served) -> None:
    templates_exist(fake_api)
    response = post(warning, workload_pcs(), {"username": "heidi"})
    assert response["allowed"] is True
    assert response["warnings"] == [
        f'{EXTERNAL_ENTRY}: user "heidi" may not get ResourceClaimTemplate "rs-shared/ext-ns-tpl"; a template of another '
        "namespace may be used only by users who may read it; admitted because --template-authorization is warn"
    ]
    fake_api.fail_next("POST", "subjectaccessreviews", 500)
    failing = post(warning, workload_pcs(), {"username": "ivan"})
    assert failing["allowed"] is True
    assert failing["warnings"][0].startswith(f'{EXTERNAL_ENTRY}: authorization could not be checked for user "ivan"')


def test_off_asks_nobody(fake_api: FakeApiServer, tmp_path: Path) -> None:
    templates_exist(fake_api)
    for served in start(tmp_path, fake_api, "--template-authorization", "off"):
        assert post(served, workload_pcs(), {"username": "judy"}) == {
            "uid": review(None)["request"]["uid"], "allowed": True, "status": {"code": 200}
        }
    assert fake_api.authorization.reviews == []


def test_the_embedded_store_has_no_api_server_to_ask(tmp_path: Path) -> None:
    objects = Path(__file__).resolve().parents[2] / "examples" / "objects"
    with serve(tmp_path, "--objects", str(objects), "--template-authorization", "enforce") as served:
        response = post(served, workload_pcs(), {"username": "judy"})
    assert response["allowed"] is True and "warnings" not in response


def reviews_made(served: Served) -> dict[str, float]:
    with served.client() as client:
        text = client.get("/metrics").text
    return {
        sample.labels["result"]: sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "webhook_template_authorization_reviews"
        for sample in family.samples
        if sample.name.endswith("_total")
    }


def test_reviews_are_counted_by_result_and_remembered_answers_are_not(fake_api: FakeApiServer, enforcing: Served) -> None:
    """An operator alerts on ``error``: PodCliqueSets refused because the API server could not say."""
    before = reviews_made(enforcing)
    assert set(before) == {"allowed", "denied", "error"}
    fake_api.authorization.allow(user="lena", namespace="rs-shared")
    assert post(enforcing, workload_pcs(), {"username": "lena"})["allowed"] is True
    assert post(enforcing, workload_pcs(), {"username": "lena"})["allowed"] is True  # remembered
    assert post(enforcing, workload_pcs(), {"username": "mike"})["allowed"] is False
    fake_api.fail_next("POST", "subjectaccessreviews", 503, "ServiceUnavailable", message="the authorizer is down")
    assert post(enforcing, workload_pcs(), {"username": "nina"})["allowed"] is False
    after = reviews_made(enforcing)
    assert {result: after[result] - before[result] for result in after} == {"allowed": 1, "denied": 1, "error": 1}
