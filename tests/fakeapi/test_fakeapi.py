"""The fake API server, driven only through the official ``kubernetes`` client.

Hooks on the server are used for setup and assertions only where the client
cannot say it (compacting history, expiring watches, counting requests).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import urllib3
from kubernetes import client as k8s
from kubernetes import dynamic, watch
from kubernetes.client.rest import ApiException

from fakeapi import CuttableProxy, FakeApiServer, new_api_client, wait_until

NS = "team-a"
GROVE = ("grove.io", "v1alpha1")
CLAIM_TYPE = "ResourceV1ResourceClaim"  # the claim model's name in kubernetes 37.0.2


def status_of(exc: ApiException) -> dict[str, Any]:
    return json.loads(exc.body)


def claim(name: str, labels: dict[str, str] | None = None, owners: list[dict[str, Any]] | None = None,
          **meta: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": labels or {}, **meta}
    if owners:
        metadata["ownerReferences"] = owners
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": metadata,
            "spec": {"devices": {"requests": []}}}


def owner_ref(obj: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True}


def grove(kind: str, name: str, owners: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if owners:
        metadata["ownerReferences"] = owners
    return {"apiVersion": "grove.io/v1alpha1", "kind": kind, "metadata": metadata, "spec": {"replicas": 1}}


@pytest.fixture
def claims(kube_api_client: Any) -> k8s.ResourceV1Api:
    return k8s.ResourceV1Api(kube_api_client)


@pytest.fixture
def custom(kube_api_client: Any) -> k8s.CustomObjectsApi:
    return k8s.CustomObjectsApi(kube_api_client)


@pytest.fixture
def leases(kube_api_client: Any) -> k8s.CoordinationV1Api:
    return k8s.CoordinationV1Api(kube_api_client)


def names(items: list[Any]) -> list[str]:
    return sorted(i["metadata"]["name"] if isinstance(i, dict) else i.metadata.name for i in items)


# ---- create / get / list ------------------------------------------------------
def test_create_answers_201_with_server_fields_and_get_returns_it(custom: k8s.CustomObjectsApi) -> None:
    body = grove("PodCliqueSet", "")
    body["metadata"] = {"generateName": "pcs-"}
    created, code, _ = custom.create_namespaced_custom_object_with_http_info(
        *GROVE, NS, "podcliquesets", body)
    meta = created["metadata"]
    assert code == 201
    assert meta["name"].startswith("pcs-") and len(meta["name"]) == len("pcs-") + 5
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert meta["generation"] == 1 and meta["namespace"] == NS and int(meta["resourceVersion"]) > 0
    assert custom.get_namespaced_custom_object(*GROVE, NS, "podcliquesets", meta["name"]) == created


def test_resource_versions_come_from_one_increasing_counter(claims: k8s.ResourceV1Api,
                                                            leases: k8s.CoordinationV1Api) -> None:
    first = claims.create_namespaced_resource_claim(NS, claim("c1"))
    lease = leases.create_namespaced_lease(NS, {"metadata": {"name": "l1"}, "spec": {}})
    second = claims.create_namespaced_resource_claim("other", claim("c2"))
    versions = [int(o.metadata.resource_version) for o in (first, lease, second)]
    assert versions == sorted(versions) and len(set(versions)) == 3
    assert claims.list_resource_claim_for_all_namespaces().metadata.resource_version == str(versions[-1])


@pytest.mark.parametrize(("selector", "expected"), [
    ("app=web", ["a", "b"]),
    ("app==web", ["a", "b"]),
    ("app!=web", ["c", "d"]),  # includes d, which has no app label
    ("app in (web,db)", ["a", "b", "c"]),
    ("app notin (web)", ["c", "d"]),
    ("tier", ["a", "c"]),
    ("!tier", ["b", "d"]),
    ("app=web,tier", ["a"]),
    ("app in (web, db),!tier", ["b"]),
    ("", ["a", "b", "c", "d"]),
])
def test_list_with_label_selectors(fake_api: FakeApiServer, claims: k8s.ResourceV1Api,
                                   selector: str, expected: list[str]) -> None:
    for name, labels in {"a": {"app": "web", "tier": "1"}, "b": {"app": "web"},
                         "c": {"app": "db", "tier": "2"}, "d": {}}.items():
        claims.create_namespaced_resource_claim(NS, claim(name, labels))
    assert names(claims.list_namespaced_resource_claim(NS, label_selector=selector).items) == expected


def test_list_across_namespaces_and_with_field_selectors(claims: k8s.ResourceV1Api,
                                                         custom: k8s.CustomObjectsApi) -> None:
    for ns in (NS, "team-b"):
        claims.create_namespaced_resource_claim(ns, claim(f"x-{ns}"))
        custom.create_namespaced_custom_object(*GROVE, ns, "podcliques", grove("PodClique", f"p-{ns}"))
    assert names(claims.list_resource_claim_for_all_namespaces().items) == ["x-team-a", "x-team-b"]
    assert names(claims.list_namespaced_resource_claim("team-b").items) == ["x-team-b"]
    assert names(custom.list_cluster_custom_object(*GROVE, "podcliques")["items"]) == ["p-team-a", "p-team-b"]
    by_ns = claims.list_resource_claim_for_all_namespaces(field_selector="metadata.namespace=team-b")
    assert names(by_ns.items) == ["x-team-b"]
    by_name = custom.list_cluster_custom_object(*GROVE, "podcliques", field_selector="metadata.name!=p-team-a")
    assert names(by_name["items"]) == ["p-team-b"]
    with pytest.raises(ApiException) as err:
        claims.list_resource_claim_for_all_namespaces(field_selector="spec.nodeName=x")
    assert err.value.status == 400 and "field label not supported" in status_of(err.value)["message"]


def test_list_in_pages_with_limit_and_continue(custom: k8s.CustomObjectsApi) -> None:
    """Pages in namespace/name order, each saying the first page's resourceVersion; objects created
    meanwhile appear in later pages when they sort after the last key sent (no snapshot here)."""
    for ns in ("team-b", NS):
        for i in range(3):
            custom.create_namespaced_custom_object(*GROVE, ns, "podcliques", grove("PodClique", f"p{i}"))
    pages, versions, token = [], set(), None
    while True:
        page = custom.list_cluster_custom_object(*GROVE, "podcliques", limit=2, **({"_continue": token} if token else {}))
        pages.append([f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in page["items"]])
        versions.add(page["metadata"]["resourceVersion"])
        token = page["metadata"].get("continue")
        if not token:
            break
        if len(pages) == 1:
            custom.create_namespaced_custom_object(*GROVE, "team-c", "podcliques", grove("PodClique", "late"))
    assert pages == [["team-a/p0", "team-a/p1"], ["team-a/p2", "team-b/p0"], ["team-b/p1", "team-b/p2"], ["team-c/late"]]
    assert len(versions) == 1
    with pytest.raises(ApiException) as err:
        custom.list_cluster_custom_object(*GROVE, "podcliques", limit=2, _continue="not-a-token")
    assert err.value.status == 400


def test_core_events_with_field_selector(kube_api_client: Any) -> None:
    core = k8s.CoreV1Api(kube_api_client)
    for name, target in (("e1", "claim-a"), ("e2", "claim-b")):
        core.create_namespaced_event(NS, {"metadata": {"name": name}, "reason": "Allocated",
                                          "involvedObject": {"kind": "ResourceClaim", "name": target}})
    listed = core.list_namespaced_event(NS, field_selector="involvedObject.name=claim-b,reason=Allocated")
    assert names(listed.items) == ["e2"]


# ---- create errors ----------------------------------------------------------
def test_duplicate_create_is_409_already_exists(claims: k8s.ResourceV1Api) -> None:
    claims.create_namespaced_resource_claim(NS, claim("dup"))
    with pytest.raises(ApiException) as err:
        claims.create_namespaced_resource_claim(NS, claim("dup"))
    body = status_of(err.value)
    assert err.value.status == 409 and body["reason"] == "AlreadyExists" and body["code"] == 409
    assert body["message"] == 'resourceclaims.resource.k8s.io "dup" already exists'
    assert body["details"] == {"name": "dup", "group": "resource.k8s.io", "kind": "resourceclaims"}


def test_create_without_name_is_422_and_unknown_resource_is_404(custom: k8s.CustomObjectsApi) -> None:
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(*GROVE, NS, "podcliques", {"metadata": {}, "spec": {}})
    assert err.value.status == 422 and status_of(err.value)["reason"] == "Invalid"
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(*GROVE, NS, "nosuchthings", grove("NoSuch", "x"))
    assert err.value.status == 404 and status_of(err.value)["reason"] == "NotFound"
    with pytest.raises(ApiException) as err:  # not faked: refused rather than persisted
        custom.create_namespaced_custom_object(*GROVE, NS, "podcliques", grove("PodClique", "d"), dry_run="All")
    assert err.value.status == 400
    assert custom.list_namespaced_custom_object(*GROVE, NS, "podcliques")["items"] == []


# ---- update / patch ---------------------------------------------------------
def test_put_checks_resource_version(custom: k8s.CustomObjectsApi) -> None:
    made = custom.create_namespaced_custom_object(*GROVE, NS, "podcliquesets", grove("PodCliqueSet", "s"))
    made["spec"]["replicas"] = 3
    updated = custom.replace_namespaced_custom_object(*GROVE, NS, "podcliquesets", "s", made)
    assert int(updated["metadata"]["resourceVersion"]) > int(made["metadata"]["resourceVersion"])
    assert updated["metadata"]["generation"] == 2
    with pytest.raises(ApiException) as err:  # `made` still carries the old resourceVersion
        custom.replace_namespaced_custom_object(*GROVE, NS, "podcliquesets", "s", made)
    body = status_of(err.value)
    assert err.value.status == 409 and body["reason"] == "Conflict"
    assert body["message"] == ('Operation cannot be fulfilled on podcliquesets.grove.io "s": the object has '
                               'been modified; please apply your changes to the latest version and try again')
    with pytest.raises(ApiException) as err:
        custom.replace_namespaced_custom_object(*GROVE, NS, "podcliquesets", "gone", grove("PodCliqueSet", "gone"))
    assert err.value.status == 404


def test_status_subresource_separates_spec_and_status(custom: k8s.CustomObjectsApi) -> None:
    made = custom.create_namespaced_custom_object(*GROVE, NS, "podcliques", grove("PodClique", "p"))
    patched = custom.patch_namespaced_custom_object_status(*GROVE, NS, "podcliques", "p",
                                                           {"status": {"ready": 1}, "spec": {"replicas": 9}})
    assert patched["status"] == {"ready": 1} and patched["spec"] == made["spec"]
    ignored = custom.patch_namespaced_custom_object(*GROVE, NS, "podcliques", "p", {"status": {"ready": 5}})
    assert ignored["status"] == {"ready": 1}


def test_merge_patch(custom: k8s.CustomObjectsApi) -> None:
    body = grove("PodCliqueSet", "m")
    body["metadata"]["labels"] = {"keep": "1", "drop": "1"}
    made = custom.create_namespaced_custom_object(*GROVE, NS, "podcliquesets", body)
    patched = custom.patch_namespaced_custom_object(
        *GROVE, NS, "podcliquesets", "m", {"metadata": {"labels": {"drop": None, "new": "2"}}})
    assert patched["metadata"]["labels"] == {"keep": "1", "new": "2"}
    assert patched["metadata"]["generation"] == 1  # metadata-only change
    stale = {"metadata": {"resourceVersion": made["metadata"]["resourceVersion"], "labels": {"x": "y"}}}
    with pytest.raises(ApiException) as err:
        custom.patch_namespaced_custom_object(*GROVE, NS, "podcliquesets", "m", stale)
    assert err.value.status == 409 and status_of(err.value)["reason"] == "Conflict"


def test_json_patch(leases: k8s.CoordinationV1Api) -> None:
    leases.create_namespaced_lease(NS, {"metadata": {"name": "j", "labels": {"a": "1"}},
                                        "spec": {"holderIdentity": "one"}})
    patched = leases.patch_namespaced_lease("j", NS, [
        {"op": "test", "path": "/spec/holderIdentity", "value": "one"},
        {"op": "replace", "path": "/spec/holderIdentity", "value": "two"},
        {"op": "add", "path": "/metadata/labels/b", "value": "2"},
        {"op": "remove", "path": "/metadata/labels/a"},
    ])
    assert patched.spec.holder_identity == "two" and patched.metadata.labels == {"b": "2"}
    with pytest.raises(ApiException) as err:
        leases.patch_namespaced_lease("j", NS, [{"op": "test", "path": "/spec/holderIdentity", "value": "one"}])
    assert err.value.status == 422


def test_strategic_merge_patch_unions_finalizers(kube_api_client: Any) -> None:
    core = k8s.CoreV1Api(kube_api_client)
    core.create_namespaced_pod(NS, {"metadata": {"name": "p", "finalizers": ["a"]},
                                    "spec": {"containers": [{"name": "c", "image": "i"}]}})
    patched = core.patch_namespaced_pod("p", NS, {"metadata": {"finalizers": ["b"]},
                                                  "spec": {"containers": [{"name": "c", "image": "j"}]}})
    assert patched.metadata.finalizers == ["a", "b"] and patched.spec.containers[0].image == "j"


# ---- delete / deletecollection / garbage collection --------------------------
def test_delete_with_uid_precondition(claims: k8s.ResourceV1Api) -> None:
    made = claims.create_namespaced_resource_claim(NS, claim("d"))
    wrong = k8s.V1DeleteOptions(preconditions=k8s.V1Preconditions(uid="not-it"))
    with pytest.raises(ApiException) as err:
        claims.delete_namespaced_resource_claim("d", NS, body=wrong)
    assert err.value.status == 409
    assert status_of(err.value)["message"] == (
        f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "d": Precondition failed: '
        f"UID in precondition: not-it, UID in object meta: {made.metadata.uid}")
    right = k8s.V1DeleteOptions(preconditions=k8s.V1Preconditions(uid=made.metadata.uid))
    deleted = claims.delete_namespaced_resource_claim("d", NS, body=right)
    assert deleted.metadata.uid == made.metadata.uid
    with pytest.raises(ApiException) as err:
        claims.read_namespaced_resource_claim("d", NS)
    body = status_of(err.value)
    assert err.value.status == 404 and body["reason"] == "NotFound"
    assert body["message"] == 'resourceclaims.resource.k8s.io "d" not found'
    with pytest.raises(ApiException) as err:
        claims.delete_namespaced_resource_claim("d", NS)
    assert err.value.status == 404


def test_finalizers_hold_a_deleted_object(fake_api: FakeApiServer, claims: k8s.ResourceV1Api) -> None:
    claims.create_namespaced_resource_claim(NS, claim("f", finalizers=["example.com/hold"]))
    pending = claims.delete_namespaced_resource_claim("f", NS)
    assert pending.metadata.deletion_timestamp is not None
    claims.patch_namespaced_resource_claim("f", NS, {"metadata": {"$deleteFromPrimitiveList/finalizers":
                                                                  ["example.com/hold"]}})
    assert fake_api.get("resourceclaims", NS, "f") is None


def test_deleting_a_namespace_deletes_what_is_in_it(kube_api_client: Any, claims: k8s.ResourceV1Api) -> None:
    core = k8s.CoreV1Api(kube_api_client)
    core.create_namespace({"metadata": {"name": "doomed"}})
    claims.create_namespaced_resource_claim("doomed", claim("inside"))
    claims.create_namespaced_resource_claim(NS, claim("outside"))
    core.delete_namespace("doomed")
    assert names(claims.list_resource_claim_for_all_namespaces().items) == ["outside"]
    assert core.list_namespace().items == []


def test_deletecollection_by_selector(leases: k8s.CoordinationV1Api) -> None:
    for name, role in (("l1", "x"), ("l2", "x"), ("l3", "y")):
        leases.create_namespaced_lease(NS, {"metadata": {"name": name, "labels": {"role": role}}, "spec": {}})
    leases.delete_collection_namespaced_lease(NS, label_selector="role=x")
    assert names(leases.list_namespaced_lease(NS).items) == ["l3"]
    leases.delete_collection_namespaced_lease(NS, field_selector="metadata.name=l3")
    assert leases.list_namespaced_lease(NS).items == []


def test_garbage_collection_follows_owner_chains(fake_api: FakeApiServer, custom: k8s.CustomObjectsApi,
                                                 claims: k8s.ResourceV1Api) -> None:
    pcs = custom.create_namespaced_custom_object(*GROVE, NS, "podcliquesets", grove("PodCliqueSet", "top"))
    pclq = custom.create_namespaced_custom_object(*GROVE, NS, "podcliques",
                                                  grove("PodClique", "mid", [owner_ref(pcs)]))
    claims.create_namespaced_resource_claim(NS, claim("leaf", owners=[owner_ref(pclq)]))
    other = claims.create_namespaced_resource_claim(NS, claim("other-owner"))
    other_ref = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "name": "other-owner",
                 "uid": other.metadata.uid}
    shared = claims.create_namespaced_resource_claim(NS, claim("shared", owners=[owner_ref(pclq), other_ref]))

    custom.delete_namespaced_custom_object(*GROVE, NS, "podcliquesets", "top")

    # two levels down (set -> clique -> claim) are gone; a dependent with another live owner stays
    assert custom.list_namespaced_custom_object(*GROVE, NS, "podcliques")["items"] == []
    assert names(claims.list_namespaced_resource_claim(NS).items) == ["other-owner", "shared"]
    kept = claims.read_namespaced_resource_claim("shared", NS)
    assert [r.uid for r in kept.metadata.owner_references] == [other.metadata.uid]
    assert int(kept.metadata.resource_version) > int(shared.metadata.resource_version)
    assert fake_api.get("podcliques", NS, "mid") is None


def test_watch_sees_gc_deletions(custom: k8s.CustomObjectsApi, claims: k8s.ResourceV1Api) -> None:
    pcs = custom.create_namespaced_custom_object(*GROVE, NS, "podcliquesets", grove("PodCliqueSet", "top"))
    claims.create_namespaced_resource_claim(NS, claim("owned", owners=[owner_ref(pcs)]))
    since = claims.list_namespaced_resource_claim(NS).metadata.resource_version
    custom.delete_namespaced_custom_object(*GROVE, NS, "podcliquesets", "top")
    stream = watch.Watch(return_type=CLAIM_TYPE).stream(
        claims.list_namespaced_resource_claim, NS, resource_version=since, timeout_seconds=5)
    event = next(stream)
    stream.close()
    assert (event["type"], event["object"].metadata.name) == ("DELETED", "owned")
    assert int(event["object"].metadata.resource_version) > int(since)


def test_orphan_propagation_keeps_dependents(custom: k8s.CustomObjectsApi, claims: k8s.ResourceV1Api) -> None:
    pcs = custom.create_namespaced_custom_object(*GROVE, NS, "podcliquesets", grove("PodCliqueSet", "top"))
    claims.create_namespaced_resource_claim(NS, claim("kept", owners=[owner_ref(pcs)]))
    custom.delete_namespaced_custom_object(*GROVE, NS, "podcliquesets", "top", propagation_policy="Orphan")
    assert claims.read_namespaced_resource_claim("kept", NS).metadata.owner_references is None


# ---- watch --------------------------------------------------------------------
def test_watch_from_resource_version_gets_later_changes_in_order(claims: k8s.ResourceV1Api) -> None:
    claims.create_namespaced_resource_claim(NS, claim("before"))
    since = claims.list_namespaced_resource_claim(NS).metadata.resource_version
    claims.create_namespaced_resource_claim(NS, claim("a"))
    claims.patch_namespaced_resource_claim("a", NS, {"metadata": {"labels": {"v": "2"}}})
    claims.create_namespaced_resource_claim("elsewhere", claim("not-this-namespace"))
    claims.delete_namespaced_resource_claim("a", NS)

    w = watch.Watch(return_type=CLAIM_TYPE)
    stream = w.stream(claims.list_namespaced_resource_claim, NS, resource_version=since)
    seen = [(next(stream)["type"], w.resource_version) for _ in range(3)]
    assert [t for t, _ in seen] == ["ADDED", "MODIFIED", "DELETED"]
    versions = [int(rv) for _, rv in seen]
    assert versions == sorted(versions) and versions[0] > int(since)

    claims.create_namespaced_resource_claim(NS, claim("live"))  # arrives on the open stream
    event = next(stream)
    w.stop()
    stream.close()
    assert (event["type"], event["object"].metadata.name) == ("ADDED", "live")


def test_watch_without_resource_version_starts_with_current_objects(claims: k8s.ResourceV1Api,
                                                                     fake_api: FakeApiServer) -> None:
    for name in ("x", "y"):
        claims.create_namespaced_resource_claim(NS, claim(name))
    stream = watch.Watch(return_type=CLAIM_TYPE).stream(claims.list_namespaced_resource_claim, NS,
                                                        timeout_seconds=5)
    first = [next(stream) for _ in range(2)]
    fake_api.patch("resourceclaims", NS, "x", {"metadata": {"labels": {"hook": "1"}}})
    then = next(stream)
    stream.close()
    assert [(e["type"], e["object"].metadata.name) for e in first] == [("ADDED", "x"), ("ADDED", "y")]
    assert (then["type"], then["object"].metadata.labels) == ("MODIFIED", {"hook": "1"})


def test_watch_with_label_selector_sees_objects_enter_and_leave(custom: k8s.CustomObjectsApi) -> None:
    since = custom.list_namespaced_custom_object(*GROVE, NS, "podcliques")["metadata"]["resourceVersion"]
    custom.create_namespaced_custom_object(*GROVE, NS, "podcliques", grove("PodClique", "p"))
    for value in ("yes", "no", None):
        custom.patch_namespaced_custom_object(*GROVE, NS, "podcliques", "p", {"metadata": {"labels": {"pick": value}}})
    custom.patch_namespaced_custom_object(*GROVE, NS, "podcliques", "p", {"metadata": {"labels": {"pick": "yes"}}})
    custom.delete_namespaced_custom_object(*GROVE, NS, "podcliques", "p")
    stream = watch.Watch().stream(custom.list_namespaced_custom_object, *GROVE, NS, "podcliques",
                                  label_selector="pick=yes", resource_version=since, timeout_seconds=5)
    events = [next(stream) for _ in range(3)]
    stream.close()
    assert [e["type"] for e in events] == ["ADDED", "DELETED", "ADDED"]
    assert events[1]["object"]["metadata"]["labels"] == {"pick": "yes"}  # the state it left in


def test_expired_resource_version_gives_410_then_relist_works(fake_api: FakeApiServer,
                                                              claims: k8s.ResourceV1Api) -> None:
    claims.create_namespaced_resource_claim(NS, claim("old"))
    old_rv = claims.list_namespaced_resource_claim(NS).metadata.resource_version
    claims.create_namespaced_resource_claim(NS, claim("new"))
    fake_api.compact()
    latest = fake_api.resource_version
    fake_api.requests.reset()

    # with timeout_seconds the client does not retry: the ERROR event raises at once
    with pytest.raises(ApiException) as err:
        list(watch.Watch(return_type=CLAIM_TYPE).stream(
            claims.list_namespaced_resource_claim, NS, resource_version=old_rv, timeout_seconds=5))
    assert err.value.status == 410
    assert err.value.reason == f"Expired: too old resource version: {old_rv} ({latest})"
    assert fake_api.requests.count("GET", watch=True) == 1

    # without it the client retries once from the same resourceVersion, then raises
    with pytest.raises(ApiException) as err:
        list(watch.Watch(return_type=CLAIM_TYPE).stream(
            claims.list_namespaced_resource_claim, NS, resource_version=old_rv))
    assert err.value.status == 410
    assert fake_api.requests.count("GET", watch=True) == 3

    relisted = claims.list_namespaced_resource_claim(NS)
    assert names(relisted.items) == ["new", "old"]
    stream = watch.Watch(return_type=CLAIM_TYPE).stream(
        claims.list_namespaced_resource_claim, NS, resource_version=relisted.metadata.resource_version,
        timeout_seconds=5)
    claims.delete_namespaced_resource_claim("old", NS)
    event = next(stream)
    stream.close()
    assert (event["type"], event["object"].metadata.name) == ("DELETED", "old")


def test_expired_watch_streams_are_resumed_from_the_last_resource_version(
        fake_api: FakeApiServer, claims: k8s.ResourceV1Api) -> None:
    since = claims.list_namespaced_resource_claim(NS).metadata.resource_version
    claims.create_namespaced_resource_claim(NS, claim("first"))
    w = watch.Watch(return_type=CLAIM_TYPE)
    stream = w.stream(claims.list_namespaced_resource_claim, NS, resource_version=since)
    first = next(stream)
    assert fake_api.expire_watches() == 1
    claims.create_namespaced_resource_claim(NS, claim("second"))  # made while no stream is open
    second = next(stream)  # the client reconnects from first's resourceVersion
    stream.close()
    assert (first["object"].metadata.name, second["object"].metadata.name) == ("first", "second")
    wait_until(lambda: fake_api.open_watches() == 0, message="closed stream unregistered")
    watches = fake_api.requests.matching("GET", watch=True)
    assert [r.params["resourceVersion"] for r in watches] == [since, first["object"].metadata.resource_version]


def test_timeout_seconds_ends_the_stream(fake_api: FakeApiServer, leases: k8s.CoordinationV1Api) -> None:
    started = time.monotonic()
    events = list(watch.Watch().stream(leases.list_namespaced_lease, NS, timeout_seconds=1))
    elapsed = time.monotonic() - started
    assert events == [] and 0.9 <= elapsed < 3
    assert fake_api.open_watches() == 0


def test_watch_accepts_watch_1_and_newline_delimited_events(fake_api: FakeApiServer,
                                                            kube_api_client: Any) -> None:
    fake_api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS}})
    url = f"{fake_api.url}/api/v1/namespaces/{NS}/pods?watch=1&resourceVersion=0"
    response = kube_api_client.call_api("GET", url)  # returns once the headers are in
    assert fake_api.expire_watches() == 1  # so that read() finds the end of the stream
    lines = response.read().decode().splitlines()
    assert response.status == 200 and len(lines) == 1
    assert json.loads(lines[0])["type"] == "ADDED"


def test_stop_ends_open_watch_streams_promptly(tmp_path: Path) -> None:
    server = FakeApiServer()
    api_client = new_api_client(server.write_kubeconfig(tmp_path / "kubeconfig"))
    try:
        api = k8s.CoordinationV1Api(api_client)
        server.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": "l", "namespace": NS}})
        stream = watch.Watch().stream(api.list_namespaced_lease, NS, timeout_seconds=60)
        assert next(stream)["type"] == "ADDED"
        started = time.monotonic()
        server.stop()
        assert list(stream) == []
        assert time.monotonic() - started < 3
    finally:
        server.stop()
        api_client.close()


# ---- hooks: faults, request log, dynamic client --------------------------------
def test_fail_next_and_request_log(fake_api: FakeApiServer, claims: k8s.ResourceV1Api) -> None:
    fault = fake_api.fail_next("GET", r"/resourceclaims$", 503, "ServiceUnavailable", times=2)
    for _ in range(2):
        with pytest.raises(ApiException) as err:
            claims.list_namespaced_resource_claim(NS)
        assert err.value.status == 503 and status_of(err.value)["reason"] == "ServiceUnavailable"
    assert claims.list_namespaced_resource_claim(NS).items == []
    assert len(fault.hits) == 2
    assert fake_api.requests.count("GET", r"/namespaces/team-a/resourceclaims$") == 3
    claims.create_namespaced_resource_claim(NS, claim("c"))
    assert fake_api.requests.count("POST") == 1 and len(fake_api.requests) == 4
    fake_api.requests.reset()
    assert len(fake_api.requests) == 0


def test_dynamic_client_discovers_and_serves(kube_api_client: Any, tmp_path: Path) -> None:
    dyn = dynamic.DynamicClient(kube_api_client, cache_file=str(tmp_path / "discovery.json"))
    cliques = dyn.resources.get(api_version="grove.io/v1alpha1", kind="PodClique")
    assert cliques.namespaced and "watch" in cliques.verbs
    cliques.create(body=grove("PodClique", "dyn"), namespace=NS)
    assert [i.metadata.name for i in cliques.get(namespace=NS).items] == ["dyn"]
    claims = dyn.resources.get(api_version="resource.k8s.io/v1", kind="ResourceClaim")
    assert claims.subresources["status"].verbs == ["get", "patch", "update"]
    assert dyn.version["kubernetes"]["minor"] == "34"


# ---- hooks: late watches, outages -------------------------------------------------
DELAY = 1.0
"""Seconds the PodClique watch lags: long enough that a loaded machine still shows the claim first."""


def test_a_delayed_resource_reaches_watches_late_and_in_order(fake_api: FakeApiServer, custom: k8s.CustomObjectsApi,
                                                              claims: k8s.ResourceV1Api) -> None:
    """A claim created after its PodClique was scaled can reach a client first, as when the
    PodClique watch lags: the order within one resource is kept."""
    since = claims.list_namespaced_resource_claim(NS).metadata.resource_version
    fake_api.delay_watch("podcliques", DELAY)
    arrived: list[tuple[str, str, float]] = []

    def follow(events: int, *args: Any) -> None:
        w = watch.Watch()
        for n, event in enumerate(w.stream(custom.list_namespaced_custom_object, *args, resource_version=since,
                                           timeout_seconds=5), 1):
            meta = event["object"]["metadata"]
            arrived.append((meta["name"], meta.get("labels", {}).get("v", ""), time.monotonic()))
            if n == events:
                w.stop()

    threads = [threading.Thread(target=follow, args=(3, *GROVE, NS, "podcliques")),
               threading.Thread(target=follow, args=(1, "resource.k8s.io", "v1", NS, "resourceclaims"))]
    watching = fake_api.open_watches()
    for thread in threads:
        thread.start()
    # Both watches open first, so that every event below reaches them live, not replayed.
    wait_until(lambda: fake_api.open_watches() >= watching + 2, timeout=10, message="both watches open")
    created = time.monotonic()
    custom.create_namespaced_custom_object(*GROVE, NS, "podcliques", grove("PodClique", "pclq"))
    for v in ("2", "3"):
        custom.patch_namespaced_custom_object(*GROVE, NS, "podcliques", "pclq", {"metadata": {"labels": {"v": v}}})
    claims.create_namespaced_resource_claim(NS, claim("pclq-1-gpu"))
    for thread in threads:
        thread.join(10)

    assert [(name, v) for name, v, _ in arrived] == [("pclq-1-gpu", ""), ("pclq", ""), ("pclq", "2"), ("pclq", "3")]
    assert arrived[1][2] - created >= DELAY  # held back by the delay, not merely by load
    fake_api.delay_watch("podcliques", 0)
    assert fake_api.store.hub.delays == {}


def test_a_cut_proxy_refuses_and_resets_until_restored(fake_api: FakeApiServer, tmp_path: Path) -> None:
    with CuttableProxy((fake_api.host, fake_api.port)) as proxy:
        claims = k8s.ResourceV1Api(new_api_client(proxy.write_kubeconfig(tmp_path / "kubeconfig")))
        claims.create_namespaced_resource_claim(NS, claim("through"))
        stream = watch.Watch(return_type=CLAIM_TYPE).stream(claims.list_namespaced_resource_claim, NS,
                                                              timeout_seconds=30)
        assert next(stream)["type"] == "ADDED"

        proxy.cut()
        with pytest.raises(Exception):  # noqa: B017 - the open watch ends with whatever urllib3 raises
            next(stream)
        with pytest.raises(urllib3.exceptions.HTTPError):
            claims.list_namespaced_resource_claim(NS, _request_timeout=2)
        assert not proxy.connected and proxy.cuts == 1

        proxy.restore()
        assert [c.metadata.name for c in claims.list_namespaced_resource_claim(NS).items] == ["through"]
        assert fake_api.get("resourceclaims", NS, "through") is not None
