"""The validating webhook's decision on a whole request body: versions, operations and every kind of
unusable input, answered as DECISIONS.md §2 and controller-runtime's validator handler answer them."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from core.answers import validated
from core.podcliquesets import Object, pcs_review, small, workload
from webhook.core.admission import Answer, answer
from webhook.core.pcs.validator import PodCliqueSetValidator

UID = "5ca1ab1e-0000-4000-8000-000000000000"
ALLOWED = {"uid": UID, "allowed": True, "status": {"code": 200}}


def decided(data: Any) -> Answer:
    return validated(data)


def errored(message: str) -> Object:
    return {"uid": UID, "allowed": False, "status": {"code": 400, "message": message}}


CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "rs-test", "namespace": "default"},
    "data": {"replicas": "1"},
}


def with_request(**request: Any) -> Object:
    review = pcs_review(workload())
    review["request"].update(request)
    return review


@pytest.mark.parametrize("api_version", ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"])
def test_answered_in_the_version_asked_with_the_uid(api_version: str) -> None:
    decision = decided(pcs_review(workload(), api_version=api_version))
    assert (decision.status, decision.outcome, decision.operation) == (200, "allowed", "CREATE")
    assert decision.body == {"apiVersion": api_version, "kind": "AdmissionReview", "response": ALLOWED}


def test_a_denial_is_code_403_forbidden() -> None:
    pcs = workload()
    pcs["spec"]["template"]["resourceSharing"][0]["name"] = ""
    decision = decided(pcs_review(pcs))
    assert decision.outcome == "denied"
    assert decision.body["response"] == {
        "uid": UID,
        "allowed": False,
        "status": {"code": 403, "reason": "Forbidden", "message": "spec.template.resourceSharing[0].name: Required value: reference name is required"},
    }


@pytest.mark.parametrize(
    ("review", "expected"),
    [
        pytest.param(pcs_review(None, operation="DELETE", old=small()), ALLOWED, id="delete-allowed-untouched"),
        pytest.param(pcs_review(None, operation="CONNECT"), ALLOWED, id="connect-allowed-untouched"),
        pytest.param(pcs_review(workload(), operation="PATCH"), errored('unknown operation "PATCH"'), id="unknown-operation"),
        pytest.param(pcs_review(workload(), operation=""), errored('unknown operation ""'), id="empty-operation"),
        pytest.param(pcs_review(workload(), operation='create"\n'), errored('unknown operation "create\\"\\n"'), id="operation-printed-with-q"),
        pytest.param(pcs_review(None), errored("there is no content to decode: request.object is missing"), id="create-without-object"),
        pytest.param(
            pcs_review(workload(), operation="UPDATE"),
            errored("there is no content to decode: request.oldObject is missing"),
            id="update-without-old-object",
        ),
        pytest.param(
            pcs_review(None, operation="UPDATE", old=workload()),
            errored("there is no content to decode: request.object is missing"),
            id="update-without-object",
        ),
        pytest.param(
            with_request(object={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, kind={"group": "", "version": "v1", "kind": "Pod"}),
            errored("unable to decode v1, Kind=Pod into grove.io/v1alpha1, Kind=PodCliqueSet"),
            id="misrouted-kind",
        ),
        pytest.param(
            with_request(object={"apiVersion": "apps/v1", "kind": "Deployment"}, kind={}),
            errored("unable to decode apps/v1, Kind=Deployment into grove.io/v1alpha1, Kind=PodCliqueSet"),
            id="object-of-another-kind",
        ),
        pytest.param(
            with_request(object=CONFIG_MAP),
            errored("unable to decode v1, Kind=ConfigMap into grove.io/v1alpha1, Kind=PodCliqueSet"),
            id="object-a-configmap-under-the-podcliqueset-kind-was-allowed",
        ),
        pytest.param(
            with_request(operation="UPDATE", oldObject=CONFIG_MAP),
            errored("unable to decode v1, Kind=ConfigMap into grove.io/v1alpha1, Kind=PodCliqueSet"),
            id="old-object-a-configmap",
        ),
        pytest.param(
            with_request(object={**workload(), "apiVersion": "grove.io/v1beta1"}),
            errored("unable to decode grove.io/v1beta1, Kind=PodCliqueSet into grove.io/v1alpha1, Kind=PodCliqueSet"),
            id="object-of-another-version",
        ),
        pytest.param(
            with_request(object={k: v for k, v in workload().items() if k != "apiVersion"} | {"kind": "ConfigMap"}),
            errored("unable to decode grove.io/v1alpha1, Kind=ConfigMap into grove.io/v1alpha1, Kind=PodCliqueSet"),
            id="kind-without-apiversion-is-read-in-the-endpoints-version",
        ),
        pytest.param(
            with_request(object={k: v for k, v in workload().items() if k not in ("apiVersion", "kind")}),
            ALLOWED,
            id="object-without-apiversion-and-kind-is-the-endpoints-kind",
        ),
        pytest.param(
            with_request(object={k: v for k, v in workload().items() if k != "kind"}),
            ALLOWED,
            id="apiversion-without-kind-is-the-endpoints-kind",
        ),
        pytest.param(
            with_request(object={**workload(), "kind": "K" * 10_000}),
            errored("unable to decode grove.io/v1alpha1, Kind=" + "K" * 52 + "...K into grove.io/v1alpha1, Kind=PodCliqueSet"),
            id="a-long-kind-is-cut-short",
        ),
    ],
)
def test_operations_and_missing_objects(review: Object, expected: Object) -> None:
    decision = decided(review)
    assert decision.status == 200
    assert decision.body == {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": expected}


def undecodable(change: Any) -> Object:
    pcs = workload()
    change(pcs)
    return pcs


DECODE = "cannot decode request.object as grove.io/v1alpha1, Kind=PodCliqueSet: "


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(undecodable(lambda p: p["spec"].update(replicas="two")), DECODE + "spec.replicas", id="replicas-not-a-number"),
        pytest.param(
            undecodable(lambda p: p["spec"]["template"]["resourceSharing"][0].update(scope=1)),
            DECODE + "spec.template.resourceSharing[0].scope",
            id="scope-not-a-string",
        ),
        pytest.param(
            undecodable(lambda p: p["spec"]["template"]["cliques"][0].update(resourceSharing={"name": "x"})),
            DECODE + "spec.template.cliques[0].resourceSharing",
            id="list-not-a-list",
        ),
        pytest.param(
            undecodable(lambda p: p["spec"]["template"]["resourceClaimTemplates"][1].update(templateSpec=[])),
            DECODE + "spec.template.resourceClaimTemplates[1].templateSpec",
            id="template-spec-not-an-object",
        ),
        pytest.param(
            undecodable(lambda p: p["spec"]["template"]["resourceClaimTemplates"][2]["templateSpec"]["spec"]["devices"].update(requests="gpu")),
            DECODE + "spec.template.resourceClaimTemplates[2].templateSpec.spec.devices.requests: "
            "cannot unmarshal string into a Go value of type []v1.DeviceRequest",
            id="device-requests-not-a-list",
        ),
        pytest.param(
            undecodable(lambda p: p["spec"]["template"]["resourceClaimTemplates"][0]["templateSpec"]["spec"]["devices"]["requests"][0]["exactly"].update(count="1")),
            DECODE + "spec.template.resourceClaimTemplates[0].templateSpec.spec.devices.requests[0].exactly.count: "
            "cannot unmarshal string into a Go value of type int64",
            id="count-not-a-number",
        ),
    ],
)
def test_an_object_go_could_not_decode_is_code_400_with_the_field(obj: Object, message: str) -> None:
    response = decided(pcs_review(obj)).body["response"]
    assert response["allowed"] is False and response["status"]["code"] == 400 and response["uid"] == UID
    assert response["status"]["message"].startswith(message)


def test_an_old_object_go_could_not_decode_is_code_400_too() -> None:
    old = workload()
    old["spec"]["template"]["resourceClaimTemplates"][0]["templateSpec"]["spec"]["devices"]["requests"][0]["name"] = 7
    response = decided(pcs_review(workload(), operation="UPDATE", old=old)).body["response"]
    assert response == errored(
        "cannot decode request.oldObject as grove.io/v1alpha1, Kind=PodCliqueSet: "
        "spec.template.resourceClaimTemplates[0].templateSpec.spec.devices.requests[0].name: "
        "cannot unmarshal number into a Go value of type string"
    )


@pytest.mark.parametrize(
    ("body", "error"),
    [
        pytest.param(b"{not json", "request body is not valid JSON", id="not-json"),
        pytest.param(b"", "request body is empty: expected an AdmissionReview", id="empty"),
        pytest.param(b" \n ", "request body is empty: expected an AdmissionReview", id="blank"),
        pytest.param(b"[]", "request body must be a JSON object (an AdmissionReview)", id="array"),
        pytest.param(b"null", "request body must be a JSON object (an AdmissionReview)", id="null"),
        pytest.param({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}, "AdmissionReview has no request", id="no-request"),
        pytest.param({**with_request(), "request": []}, "AdmissionReview has no request", id="request-not-an-object"),
        pytest.param({"request": {"operation": "CREATE", "object": workload()}}, "AdmissionReview request has no uid", id="no-uid"),
        pytest.param(with_request(uid=""), "AdmissionReview request has no uid", id="empty-uid"),
        pytest.param(with_request(uid=42), "AdmissionReview request has no uid", id="uid-not-a-string"),
        pytest.param(
            {**with_request(), "apiVersion": "admission.k8s.io/v2"},
            'unsupported AdmissionReview apiVersion "admission.k8s.io/v2": expected one of admission.k8s.io/v1, admission.k8s.io/v1beta1',
            id="wrong-review-api-version",
        ),
        pytest.param({**with_request(), "kind": "ConversionReview"}, 'unsupported kind "ConversionReview": expected AdmissionReview', id="wrong-review-kind"),
        pytest.param(
            b'{"apiVersion": ' + b"[" * 300 + b"]" * 300 + b', "request": {"uid": "u"}}',
            "unsupported AdmissionReview apiVersion (an array): expected one of admission.k8s.io/v1, admission.k8s.io/v1beta1",
            id="api-version-nested-300-deep-was-code-500",
        ),
        pytest.param(
            {**with_request(), "apiVersion": "v" * 100_000},
            f'unsupported AdmissionReview apiVersion "{"v" * 75}...": expected one of admission.k8s.io/v1, admission.k8s.io/v1beta1',
            id="api-version-of-100000-characters-cut-short",
        ),
        pytest.param({**with_request(), "kind": {"kind": "AdmissionReview"}}, "unsupported kind (an object): expected AdmissionReview", id="kind-an-object"),
    ],
)
def test_unusable_bodies_are_http_400_with_one_sentence(body: Any, error: str) -> None:
    decision = decided(body)
    assert (decision.status, decision.outcome) == (400, "rejected")
    assert list(decision.body) == ["error"]
    assert decision.body["error"].startswith(error)


def with_parameters(pcs: Object, parameters: Any) -> Object:
    for template in pcs["spec"]["template"]["resourceClaimTemplates"]:
        template["templateSpec"]["spec"]["devices"]["config"] = [{"opaque": {"driver": "gpu.example.com", "parameters": parameters}}]
    return pcs


DEEP = b"[" * 300 + b"]" * 300
TOO_DEEP = errored(
    "cannot decode request.object as grove.io/v1alpha1, Kind=PodCliqueSet: "
    "spec.template.resourceClaimTemplates[0].templateSpec.spec.devices.config[0].opaque.parameters: nested more than 100 levels deep"
)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            orjson.dumps(pcs_review(with_parameters(small(), "DEEP"), operation="UPDATE", old=with_parameters(small(), "DEEP"))),
            TOO_DEEP,
            id="update-unchanged-was-code-500",
        ),
        pytest.param(
            orjson.dumps(pcs_review(with_parameters(small(), "DEEP"), operation="UPDATE", old=small())),
            TOO_DEEP,
            id="update-adding-them-was-code-500",
        ),
        pytest.param(orjson.dumps(pcs_review(with_parameters(small(), "DEEP"))), TOO_DEEP, id="create"),
        pytest.param(
            orjson.dumps(pcs_review(small(), operation="UPDATE", old=with_parameters(small(), "DEEP"))),
            {**TOO_DEEP, "status": {**TOO_DEEP["status"], "message": TOO_DEEP["status"]["message"].replace("request.object", "request.oldObject")}},
            id="update-removing-them",
        ),
    ],
)
def test_opaque_parameters_nested_deeper_than_100_levels_are_refused_with_code_400(body: bytes, expected: Object) -> None:
    """orjson writes at most 255 levels, so comparing or printing such parameters failed the request."""
    decision = decided(body.replace(b'"DEEP"', DEEP))
    assert decision.body["response"] == expected


def test_opaque_parameters_nested_100_levels_deep_are_read() -> None:
    deep = b"[" * 100 + b"]" * 100
    body = orjson.dumps(pcs_review(with_parameters(small(), "DEEP"), operation="UPDATE", old=with_parameters(small(), "DEEP")))
    assert decided(body.replace(b'"DEEP"', deep)).body["response"] == ALLOWED


def with_unknown_field(pcs: Object) -> Object:
    pcs["spec"]["template"]["resourceClaimTemplates"][0]["templateSpec"]["spec"]["unknownField"] = "DEEP"
    return pcs


@pytest.mark.parametrize("deep", [b'{"a":' * 300 + b"1" + b"}" * 300, b"[" * 1000 + b"]" * 1000], ids=["300-objects", "1000-arrays"])
@pytest.mark.parametrize(
    ("new", "old"),
    [
        pytest.param(with_unknown_field(small()), small(), id="in-object"),
        pytest.param(small(), with_unknown_field(small()), id="in-old-object"),
        pytest.param(with_unknown_field(small()), with_unknown_field(small()), id="in-both"),
    ],
)
def test_a_template_field_go_ignores_is_ignored_however_deep_it_nests(new: Object, old: Object, deep: bytes) -> None:
    """Go's decoder drops a field its types do not have. Such a field nested 300 levels deep was
    compared as JSON text, which orjson cannot write (code 500); 1000 levels failed Python's ``==``."""
    body = orjson.dumps(pcs_review(new, operation="UPDATE", old=old)).replace(b'"DEEP"', deep)
    assert decided(body).body["response"] == ALLOWED
