"""Templates of other namespaces (DECISIONS.md §3.1), decided in-process with a stand-in for the API
server: which references are asked about, once each, when, and what the user is answered."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.podcliquesets import Object, cross_namespace, pcs_review, small, workload
from webhook.core.admission import answer
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.pcs.authorization import (
    AccessUnknown,
    TemplateAuthorization,
    User,
    cross_namespace_references,
)
from webhook.core.pcs.validator import PodCliqueSetValidator

ADMIN = User("kubernetes-admin", groups=("system:masters", "system:authenticated"))
Asked = tuple[User, str, str]


class Access:
    """Answers from ``decide(namespace, name)``; records every question."""

    def __init__(self, decide: Callable[[str, str], bool] = lambda _ns, _name: True) -> None:
        self.decide = decide
        self.asked: list[Asked] = []

    def known(self, user: User, namespace: str, name: str) -> bool | None:
        return None

    async def may_get(self, user: User, namespace: str, name: str) -> bool:
        self.asked.append((user, namespace, name))
        return self.decide(namespace, name)


class Remembering(Access):
    """Answers a template of ``team-b`` from memory, without being asked."""

    def known(self, user: User, namespace: str, name: str) -> bool | None:
        return False if namespace == "team-b" else None


def unreachable(_namespace: str, _name: str) -> bool:
    raise AccessUnknown("cannot connect to the API server: [Errno 111] Connection refused")


def decide(review: Object, access: Access, *, warn: bool = False) -> dict[str, Any]:
    validator = PodCliqueSetValidator(templates=TemplateAuthorization(access, warn=warn))
    decided = asyncio.run(answer(validator, "validate-podcliqueset", orjson.dumps(review)))
    assert decided.status == 200
    response: dict[str, Any] = decided.body["response"]
    return response


def denied(message: str) -> dict[str, Any]:
    return {"uid": pcs_review(None)["request"]["uid"], "allowed": False,
            "status": {"code": 403, "reason": "Forbidden", "message": message}}


CLIQUE_ENTRY = "spec.template.cliques[0].resourceSharing[2].namespace"
DENIED_EXT2 = (
    f'{CLIQUE_ENTRY}: Forbidden: user "kubernetes-admin" may not get ResourceClaimTemplate "team-b/ext2"; '
    "a template of another namespace may be used only by users who may read it"
)


def test_each_template_of_another_namespace_is_named_once_by_its_first_entry() -> None:
    references = cross_namespace_references(read_podcliqueset(cross_namespace()).spec, "default")
    assert [(r.namespace, r.name, str(r.path)) for r in references] == [
        ("team-b", "ext", "spec.template.resourceSharing[1].namespace"),
        ("team-b", "ext2", CLIQUE_ENTRY),
        ("team-c", "ext", "spec.template.podCliqueScalingGroups[0].resourceSharing[1].namespace"),
    ]


def test_a_user_allowed_to_read_them_is_asked_about_each_once_and_admitted() -> None:
    access = Access()
    assert decide(pcs_review(cross_namespace()), access) == decide(pcs_review(cross_namespace()), Access(lambda *_: True))
    assert access.asked == [(ADMIN, "team-b", "ext"), (ADMIN, "team-b", "ext2"), (ADMIN, "team-c", "ext")]
    assert decide(pcs_review(cross_namespace()), access)["allowed"] is True


def test_a_template_the_user_may_not_read_denies_the_create_naming_the_entry_user_and_template() -> None:
    access = Access(lambda namespace, name: (namespace, name) != ("team-b", "ext2"))
    assert decide(pcs_review(cross_namespace()), access) == denied(DENIED_EXT2)


def test_remembered_answers_are_used_and_only_the_others_asked() -> None:
    access = Remembering()
    message = decide(pcs_review(cross_namespace()), access)["status"]["message"]
    assert access.asked == [(ADMIN, "team-c", "ext")]
    assert message.startswith("[spec.template.resourceSharing[1].namespace: Forbidden:") and DENIED_EXT2 in message


def test_every_refused_template_is_in_the_one_message() -> None:
    message = decide(pcs_review(cross_namespace()), Access(lambda ns, _name: ns != "team-b"))["status"]["message"]
    assert message.startswith('[spec.template.resourceSharing[1].namespace: Forbidden: user "kubernetes-admin" may not get')
    assert message.count("Forbidden") == 2 and DENIED_EXT2 in message


def test_an_api_server_that_cannot_answer_denies_the_create() -> None:
    response = decide(pcs_review(workload()), Access(unreachable))
    assert response == denied(
        'spec.template.cliques[0].resourceSharing[1].namespace: Forbidden: authorization could not be checked for '
        'user "kubernetes-admin" to get ResourceClaimTemplate "rs-shared/ext-ns-tpl": '
        "cannot connect to the API server: [Errno 111] Connection refused"
    )


def test_warn_admits_with_a_warning_after_the_claim_warnings() -> None:
    pcs = cross_namespace()
    pcs["metadata"]["name"] = "P"  # claim names pods cannot use: warnings already
    response = decide(pcs_review(pcs), Access(lambda ns, name: (ns, name) != ("team-b", "ext2")), warn=True)
    assert response["allowed"] is True
    *claims, last = response["warnings"]
    assert claims and claims == decide(pcs_review(pcs), Access())["warnings"]
    assert last == (
        f'{CLIQUE_ENTRY}: user "kubernetes-admin" may not get ResourceClaimTemplate "team-b/ext2"; a template of '
        "another namespace may be used only by users who may read it; admitted because --template-authorization is warn"
    )
    unknown = decide(pcs_review(workload()), Access(unreachable), warn=True)
    assert unknown["allowed"] is True and unknown["warnings"][-1].startswith(
        "spec.template.cliques[0].resourceSharing[1].namespace: authorization could not be checked for "
    )


def test_the_user_is_asked_about_with_uid_groups_and_extra() -> None:
    review = pcs_review(workload())
    review["request"]["userInfo"] = {"username": "alice", "uid": "42", "groups": ["devs"],
                                     "extra": {"scopes": ["b", "a"], "authentication.kubernetes.io/pod-name": None}}
    access = Access()
    decide(review, access)
    assert access.asked == [(User("alice", "42", ("devs",), (("authentication.kubernetes.io/pod-name", ()), ("scopes", ("b", "a")))),
                             "rs-shared", "ext-ns-tpl")]


def own_namespace() -> Object:
    pcs = small()
    pcs["spec"]["template"]["resourceSharing"] = [{"name": "x", "namespace": "default", "scope": "AllReplicas"}]
    return pcs


def undecodable() -> Object:
    pcs = cross_namespace()
    pcs["spec"]["replicas"] = "one"
    return pcs


@pytest.mark.parametrize(
    ("review", "code"),
    [
        pytest.param(pcs_review(small()), 200, id="internal-templates-only"),
        pytest.param(pcs_review(own_namespace()), 200, id="templates-of-its-own-namespace"),
        pytest.param(pcs_review(cross_namespace(), operation="UPDATE", old=cross_namespace()), 200, id="update"),
        pytest.param(pcs_review(None, operation="DELETE", old=cross_namespace()), 200, id="delete"),
        pytest.param(pcs_review(undecodable()), 400, id="undecodable-create"),
    ],
)
def test_nobody_is_asked_without_a_template_of_another_namespace_or_on_other_operations(review: Object, code: int) -> None:
    access = Access(lambda *_: False)
    response = decide(review, access)
    assert access.asked == []
    assert response["status"]["code"] == code
    assert response == decide(review, Access(unreachable))


def test_an_object_the_rules_deny_is_denied_for_that_without_asking() -> None:
    pcs = cross_namespace()
    pcs["spec"]["template"]["resourceSharing"][0]["scope"] = "Bogus"
    access = Access(lambda *_: False)
    message = decide(pcs_review(pcs), access)["status"]["message"]
    assert access.asked == [] and message.startswith("spec.template.resourceSharing[0].scope: Unsupported value")


def test_a_request_without_a_user_is_denied_without_asking() -> None:
    review = pcs_review(workload())
    del review["request"]["userInfo"]
    access = Access()
    assert decide(review, access)["status"]["message"].startswith(
        'spec.template.cliques[0].resourceSharing[1].namespace: Forbidden: user "" may not get'
    )
    assert access.asked == []


TEXT = st.text(max_size=8)
USER_INFO = st.fixed_dictionaries({}, optional={
    "username": st.one_of(TEXT, st.none()),
    "uid": st.one_of(TEXT, st.none()),
    "groups": st.one_of(st.lists(TEXT, max_size=3), st.none()),
    "extra": st.one_of(st.dictionaries(TEXT, st.one_of(st.lists(TEXT, max_size=2), st.none()), max_size=3), st.none()),
})


@given(USER_INFO)
def test_a_user_is_read_with_null_members_as_empty_as_go_reads_them(raw: dict[str, Any]) -> None:
    extra = tuple(sorted((key, tuple(values or ())) for key, values in (raw.get("extra") or {}).items()))
    assert User.read(raw) == User(raw.get("username") or "", raw.get("uid") or "", tuple(raw.get("groups") or ()), extra)


def test_a_user_that_cannot_be_read_is_answered_400_only_when_it_is_needed() -> None:
    review = pcs_review(workload())
    review["request"]["userInfo"] = {"username": "alice", "groups": "devs"}
    access = Access()
    assert decide(review, access)["status"] == {
        "code": 400, "message": "cannot decode request.userInfo: groups: Input should be a valid list"
    }
    review["request"]["object"] = small()
    assert decide(review, access)["allowed"] is True
    assert access.asked == []


def test_a_failing_stand_in_is_a_bug_answered_500() -> None:
    def broken(_namespace: str, _name: str) -> bool:
        raise RuntimeError("boom")

    response = decide(pcs_review(workload()), Access(broken))
    assert response["status"] == {"code": 500, "message": "internal error in the validate-podcliqueset webhook; the server log has the details"}
