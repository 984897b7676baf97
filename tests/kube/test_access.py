"""The access table and the client that enforces it, request by request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakeapi import FakeApiServer
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.kube.access import (
    ACCESS,
    AccessDenied,
    ApiRequest,
    Component,
    Reach,
    api_request,
    guarded,
)

REACH_TEXT = {
    Reach.CLUSTER: "all namespaces (ClusterRole)",
    Reach.WORKLOAD: "`--namespace` (Role), else all namespaces (ClusterRole)",
    Reach.OWN_NAMESPACE: "its own namespace (Role)",
}


def markdown_table(component: Component) -> str:
    """The component's access as docs/reconciler.md shows it (a test keeps the two equal)."""
    rows = ["| API group | resource | verbs | where |", "|---|---|---|---|"]
    for rule in ACCESS[component]:
        group = f"`{rule.resource.group}`" if rule.resource.group else '`""` (core)'
        verbs = ", ".join(sorted(rule.verbs))
        rows.append(f"| {group} | `{rule.resource.plural}` | {verbs} | {REACH_TEXT[rule.reach]} |")
    return "\n".join(rows) + "\n"


BASE = "http://127.0.0.1:1"


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("GET", "/apis/grove.io/v1alpha1/podcliquesets", ApiRequest("list", "grove.io", "v1alpha1", "podcliquesets", None, None, None)),
        (
            "GET",
            "/apis/grove.io/v1alpha1/podcliquesets?watch=True&resourceVersion=5",
            ApiRequest("watch", "grove.io", "v1alpha1", "podcliquesets", None, None, None),
        ),
        (
            "GET",
            "/apis/grove.io/v1alpha1/watch/namespaces/ns/podcliques",
            ApiRequest("watch", "grove.io", "v1alpha1", "podcliques", "ns", None, None),
        ),
        (
            "GET",
            "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaimtemplates/t",
            ApiRequest("get", "resource.k8s.io", "v1", "resourceclaimtemplates", "ns", "t", None),
        ),
        (
            "POST",
            "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims",
            ApiRequest("create", "resource.k8s.io", "v1", "resourceclaims", "ns", None, None),
        ),
        (
            "PATCH",
            "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c/status",
            ApiRequest("patch", "resource.k8s.io", "v1", "resourceclaims", "ns", "c", "status"),
        ),
        (
            "DELETE",
            "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims",
            ApiRequest("deletecollection", "resource.k8s.io", "v1", "resourceclaims", "ns", None, None),
        ),
        ("PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", ApiRequest("update", "coordination.k8s.io", "v1", "leases", "ns", "l", None)),
        ("POST", "/api/v1/namespaces/ns/events", ApiRequest("create", "", "v1", "events", "ns", None, None)),
        ("GET", "/api/v1/namespaces/ns", ApiRequest("get", "", "v1", "namespaces", None, "ns", None)),
        ("GET", "/apis/grove.io/v1alpha1", None),
        ("GET", "/version", None),
    ],
    ids=[
        "list-all-namespaces",
        "watch-query",
        "watch-path",
        "get",
        "create",
        "subresource",
        "deletecollection",
        "update",
        "core-group",
        "namespace-object",
        "discovery",
        "version",
    ],
)

def test_requests_are_named_as_the_authorizer_names_them(method: str, path: str, expected: ApiRequest | None) -> None:
    assert api_request(method, BASE + path) == expected


def test_every_rule_names_known_verbs_once() -> None:
    verbs = {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
    for rules in ACCESS.values():
        resources = [(r.resource.group, r.resource.plural) for r in rules]
        assert len(resources) == len(set(resources))
        for rule in rules:
            assert set(rule.verbs) <= verbs and len(rule.verbs) == len(set(rule.verbs))


@pytest.fixture
def guarded_webhook(kube_api_client: Any) -> Any:
    return guarded(kube_api_client, Component.WEBHOOK)


def test_a_declared_call_goes_through_and_is_remembered(fake_api: FakeApiServer, guarded_webhook: Any) -> None:
    api = client.CustomObjectsApi(guarded_webhook)
    with pytest.raises(ApiException) as err:
        api.get_namespaced_custom_object("grove.io", "v1alpha1", "ns", "podcliquesets", "missing")
    assert err.value.status == 404
    assert set(guarded_webhook.access.calls) == {("grove.io", "podcliquesets", "get")}
    assert fake_api.requests.count("GET", "podcliquesets/missing") == 1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda api: client.CustomObjectsApi(api).delete_namespaced_custom_object(
                "grove.io", "v1alpha1", "ns", "podcliquesets", "p"
            ),
            "the webhook may not delete podcliquesets.grove.io in namespace 'ns' (not in its access table)",
        ),
        (
            lambda api: client.ResourceV1Api(api).list_resource_claim_for_all_namespaces(),
            "the webhook may not list resourceclaims.resource.k8s.io across namespaces (not in its access table)",
        ),
        (
            lambda api: client.VersionApi(api).get_code(),
            "the webhook may not GET /version/",
        ),
    ],
    ids=["undeclared-verb", "undeclared-resource", "not-a-resource"],
)
def test_an_undeclared_call_is_refused_before_it_is_sent(
    fake_api: FakeApiServer, guarded_webhook: Any, call: Any, message: str
) -> None:
    with pytest.raises(AccessDenied) as err:
        call(guarded_webhook)
    assert str(err.value) == message
    assert len(fake_api.requests) == 0


def test_own_namespace_rules_hold_only_in_the_own_namespace(fake_api: FakeApiServer, kube_api_client: Any) -> None:
    assert {r.reach for r in ACCESS[Component.RECONCILER] if r.resource.plural == "leases"} == {Reach.OWN_NAMESPACE}
    api = guarded(kube_api_client, Component.RECONCILER, own_namespace="grove-system")
    leases = client.CoordinationV1Api(api)
    with pytest.raises(ApiException):
        leases.read_namespaced_lease("l", "grove-system")
    with pytest.raises(AccessDenied, match="may not get leases.coordination.k8s.io in namespace 'default'"):
        leases.read_namespaced_lease("l", "default")


def test_the_docs_list_the_reconciler_s_access() -> None:
    readme = (Path(__file__).resolve().parents[2] / "docs" / "reconciler.md").read_text()
    assert markdown_table(Component.RECONCILER) in readme
