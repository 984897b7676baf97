"""The claim JSON Patch: applied to real pods, it yields Grove's lists and is idempotent."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webhook.core.model.pod import read_pod
from webhook.core.pod.mutator import CLAIMS_ANNOTATION, CLAIMS_ANNOTATION_PATH, claim_operations

CLAIMS = ["p-all-a", "p-0-b"]


def pod_claims(*names: str) -> list[dict[str, str]]:
    return [{"name": n, "resourceClaimName": n} for n in names]


def refs(*names: str) -> list[dict[str, str]]:
    return [{"name": n} for n in names]


def apply(pod: dict[str, Any], claims: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    operations = claim_operations(read_pod(pod), claims)
    return operations, jsonpatch.apply_patch(pod, operations)


CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "bare pod: lists and resources created",
        {"spec": {"containers": [{"name": "c"}]}},
        {"spec": {"containers": [{"name": "c", "resources": {"claims": refs(*CLAIMS)}}],
                  "resourceClaims": pod_claims(*CLAIMS)}},
    ),
    (
        "existing resources keep their limits and requests",
        {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "80Mi"}}}]}},
        {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "80Mi"},
                                                             "claims": refs(*CLAIMS)}}],
                  "resourceClaims": pod_claims(*CLAIMS)}},
    ),
    (
        "null lists and null resources are replaced",
        {"spec": {"resourceClaims": None, "containers": [{"name": "c", "resources": None},
                                                         {"name": "d", "resources": {"claims": None}}]}},
        {"spec": {"resourceClaims": pod_claims(*CLAIMS),
                  "containers": [{"name": "c", "resources": {"claims": refs(*CLAIMS)}},
                                 {"name": "d", "resources": {"claims": refs(*CLAIMS)}}]}},
    ),
    (
        "empty lists are filled",
        {"spec": {"resourceClaims": [], "containers": [{"name": "c", "resources": {"claims": []}}]}},
        {"spec": {"resourceClaims": pod_claims(*CLAIMS), "containers": [{"name": "c", "resources": {"claims": refs(*CLAIMS)}}]}},
    ),
    (
        "user claims stay first, ours are appended after them",
        {"spec": {"resourceClaims": [{"name": "mine", "resourceClaimTemplateName": "gpu"}],
                  "containers": [{"name": "c", "resources": {"claims": [{"name": "mine", "request": "r"}]}}]}},
        {"spec": {"resourceClaims": [{"name": "mine", "resourceClaimTemplateName": "gpu"}, *pod_claims(*CLAIMS)],
                  "containers": [{"name": "c", "resources": {"claims": [{"name": "mine", "request": "r"}, *refs(*CLAIMS)]}}]}},
    ),
    (
        "names already present are skipped, per list",
        {"spec": {"resourceClaims": pod_claims("p-0-b"),
                  "containers": [{"name": "c", "resources": {"claims": refs("p-all-a")}}, {"name": "d"}]}},
        {"spec": {"resourceClaims": pod_claims("p-0-b", "p-all-a"),
                  "containers": [{"name": "c", "resources": {"claims": refs("p-all-a", "p-0-b")}},
                                 {"name": "d", "resources": {"claims": refs(*CLAIMS)}}]}},
    ),
    (
        "every container then every init container, grove-initc excepted",
        {"spec": {"containers": [{"name": "a"}, {"name": "b"}],
                  "initContainers": [{"name": "setup"}, {"name": "grove-initc"}]}},
        {"spec": {"containers": [{"name": "a", "resources": {"claims": refs(*CLAIMS)}},
                                 {"name": "b", "resources": {"claims": refs(*CLAIMS)}}],
                  "initContainers": [{"name": "setup", "resources": {"claims": refs(*CLAIMS)}}, {"name": "grove-initc"}],
                  "resourceClaims": pod_claims(*CLAIMS)}},
    ),
    (
        "a container claim of that name limited to one request counts as present",
        {"spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "p-all-a", "request": "r"}]}}]}},
        {"spec": {"resourceClaims": pod_claims(*CLAIMS),
                  "containers": [{"name": "c", "resources": {"claims": [{"name": "p-all-a", "request": "r"}, *refs("p-0-b")]}}]}},
    ),
    (
        "containers are addressed by index, so two of the same name each get the claims",
        {"spec": {"containers": [{"name": "c"}, {"name": "c", "resources": {"claims": refs("p-0-b")}}]}},
        {"spec": {"resourceClaims": pod_claims(*CLAIMS),
                  "containers": [{"name": "c", "resources": {"claims": refs(*CLAIMS)}},
                                 {"name": "c", "resources": {"claims": refs("p-0-b", "p-all-a")}}]}},
    ),
    (
        "a regular container named grove-initc is the user's and gets the claims",
        {"spec": {"containers": [{"name": "grove-initc"}], "initContainers": [{"name": "grove-initc"}]}},
        {"spec": {"resourceClaims": pod_claims(*CLAIMS),
                  "containers": [{"name": "grove-initc", "resources": {"claims": refs(*CLAIMS)}}],
                  "initContainers": [{"name": "grove-initc"}]}},
    ),
    (
        "an init container with null resources",
        {"spec": {"containers": [], "initContainers": [{"name": "setup", "resources": None}]}},
        {"spec": {"resourceClaims": pod_claims(*CLAIMS), "containers": [],
                  "initContainers": [{"name": "setup", "resources": {"claims": refs(*CLAIMS)}}]}},
    ),
    (
        "a pod without a spec gets one",
        {"metadata": {"name": "p"}},
        {"metadata": {"name": "p"}, "spec": {"resourceClaims": pod_claims(*CLAIMS)}},
    ),
    (
        "unknown fields are kept as they are",
        {"spec": {"nodeName": "n", "containers": [{"name": "c", "image": "busybox", "env": [{"name": "E", "value": "1"}]}]}},
        {"spec": {"nodeName": "n", "resourceClaims": pod_claims(*CLAIMS),
                  "containers": [{"name": "c", "image": "busybox", "env": [{"name": "E", "value": "1"}],
                                  "resources": {"claims": refs(*CLAIMS)}}]}},
    ),
]


@pytest.mark.parametrize(("pod", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_patch_applied_gives_grove_lists(pod: dict[str, Any], expected: dict[str, Any]) -> None:
    original = copy.deepcopy(pod)
    operations, patched = apply(pod, CLAIMS)
    again, _ = apply(patched, CLAIMS)
    assert again == []
    assert patched["metadata"].pop("annotations") == {CLAIMS_ANNOTATION: ",".join(CLAIMS)}
    if not patched["metadata"]:
        del patched["metadata"]
    assert patched == expected
    assert pod == original


@pytest.mark.parametrize(
    ("metadata", "spec", "annotations"),
    [
        pytest.param({"annotations": {"team": "a"}}, {"containers": [{"name": "c"}]},
                     {"team": "a", CLAIMS_ANNOTATION: "p-all-a,p-0-b"}, id="other annotations are kept"),
        pytest.param({"annotations": None}, {"containers": [{"name": "c"}]},
                     {CLAIMS_ANNOTATION: "p-all-a,p-0-b"}, id="null annotations"),
        pytest.param({"annotations": {CLAIMS_ANNOTATION: "p-all-a"}},
                     {"resourceClaims": pod_claims("p-all-a"), "containers": [{"name": "c", "resources": {"claims": refs("p-all-a")}}]},
                     {CLAIMS_ANNOTATION: "p-all-a,p-0-b"}, id="names an earlier pass recorded stay first"),
        pytest.param({}, {"resourceClaims": pod_claims(*CLAIMS), "containers": [{"name": "c", "resources": {"claims": refs("p-all-a")}}]},
                     {CLAIMS_ANNOTATION: "p-0-b"}, id="only what was added, here to a container"),
    ],
)
def test_the_pod_records_the_claims_the_webhook_added(metadata: dict[str, Any], spec: dict[str, Any], annotations: dict[str, str]) -> None:
    _, patched = apply({"metadata": metadata, "spec": spec}, CLAIMS)
    assert patched["metadata"]["annotations"] == annotations


def test_claims_grove_already_put_in_the_pod_leave_no_annotation() -> None:
    pod = {"metadata": {}, "spec": {"resourceClaims": pod_claims(*CLAIMS), "containers": [{"name": "c", "resources": {"claims": refs(*CLAIMS)}}]}}
    assert claim_operations(read_pod(pod), CLAIMS) == []


def test_duplicate_names_in_the_claim_list_are_added_once() -> None:
    _, patched = apply({"spec": {"containers": [{"name": "c"}]}}, ["x", "y", "x"])
    assert patched["spec"]["resourceClaims"] == pod_claims("x", "y")
    assert patched["spec"]["containers"][0]["resources"]["claims"] == refs("x", "y")


def test_no_claims_no_operations() -> None:
    assert claim_operations(read_pod({"spec": {"containers": [{"name": "c"}]}}), []) == []


def test_operations_are_the_smallest_set() -> None:
    pod = {"spec": {"resourceClaims": pod_claims("u"), "containers": [{"name": "c", "resources": {"limits": {}}}]}}
    assert claim_operations(read_pod(pod), ["x"]) == [
        {"op": "add", "path": "/spec/resourceClaims/-", "value": {"name": "x", "resourceClaimName": "x"}},
        {"op": "add", "path": "/spec/containers/0/resources/claims", "value": [{"name": "x"}]},
        {"op": "add", "path": "/metadata", "value": {"annotations": {CLAIMS_ANNOTATION: "x"}}},
    ]


def test_the_annotation_path_is_a_json_pointer_to_the_annotation() -> None:
    assert jsonpatch.JsonPointer(CLAIMS_ANNOTATION_PATH).parts == ["metadata", "annotations", CLAIMS_ANNOTATION]


NAMES = st.sampled_from(["p-all-a", "p-0-b", "mine"])
CLAIM_LISTS = st.one_of(st.none(), st.lists(st.fixed_dictionaries({"name": NAMES}), max_size=3))
CONTAINER = st.fixed_dictionaries(
    {"name": st.sampled_from(["c", "grove-initc"])},
    optional={"resources": st.one_of(st.none(), st.fixed_dictionaries({}, optional={"claims": CLAIM_LISTS}))},
)
POD: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.just({}),
    st.fixed_dictionaries(
        {"spec": st.fixed_dictionaries(
            {},
            optional={
                "resourceClaims": CLAIM_LISTS,
                "containers": st.lists(CONTAINER, max_size=3),
                "initContainers": st.lists(CONTAINER, max_size=2),
            },
        )}
    ),
)


def names(entries: Any) -> list[str]:
    return [e["name"] for e in entries or []]


@settings(max_examples=300, deadline=None)
@given(POD)
def test_any_pod_shape_ends_with_every_claim_once_and_a_second_patch_adds_nothing(pod: dict[str, Any]) -> None:
    """Whatever lists a pod already has (null, empty, holding some of the names or others), the
    patch leaves the pod and each container but ``grove-initc`` among the init containers with
    every claim exactly once, keeps what was there, and is idempotent."""
    before = orjson.loads(orjson.dumps(pod))
    _, patched = apply(pod, CLAIMS)
    spec = patched["spec"]
    had = names(before.get("spec", {}).get("resourceClaims"))
    assert names(spec["resourceClaims"]) == had + [c for c in CLAIMS if c not in had]
    for key in ("containers", "initContainers"):
        for old, new in zip(before.get("spec", {}).get(key) or [], spec.get(key) or [], strict=True):
            old_claims = names((old.get("resources") or {}).get("claims"))
            expected = old_claims if key == "initContainers" and old["name"] == "grove-initc" else old_claims + [c for c in CLAIMS if c not in old_claims]
            assert names(((new.get("resources") or {}).get("claims"))) == expected
    assert apply(patched, CLAIMS)[0] == []
