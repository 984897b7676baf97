"""A ``templateSpec`` decoded, compared and printed through the Go types Grove holds it in."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.core.gocompat import dra
from webhook.core.gocompat.gojson import marshal
from webhook.core.gocompat.gotypes import DecodeError, GoType, Map, Ptr, Scalar, Slice, Struct, semantic_equal

REQUEST = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}


def printed(spec: dict[str, Any]) -> str:
    return marshal(dra.TEMPLATE_SPEC.marshal(dra.TEMPLATE_SPEC.decode(spec)))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"spec": {"devices": {"requests": [REQUEST]}}},
            '{"metadata":{},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}}',
            id="metadata-always-printed-creation-timestamp-omitted",
        ),
        pytest.param({}, '{"metadata":{},"spec":{"devices":{"requests":null}}}', id="devices-and-requests-never-omitted"),
        pytest.param(
            {"spec": {"devices": {"requests": [{"exactly": {"count": 0, "allocationMode": "", "deviceClassName": ""}, "name": ""}]}}},
            '{"metadata":{},"spec":{"devices":{"requests":[{"name":"","exactly":{"deviceClassName":""}}]}}}',
            id="required-strings-kept-empty-omitempty-dropped",
        ),
        pytest.param(
            {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"selectors": [{"cel": {"expression": "true"}}], "count": 2,
                                                                        "deviceClassName": "c", "unknownField": 1}}]}}},
            '{"metadata":{},"spec":{"devices":{"requests":[{"name":"g","exactly":{"deviceClassName":"c","selectors":[{"cel":{"expression":"true"}}],"count":2}}]}}}',
            id="declaration-order-and-unknown-fields-dropped",
        ),
        pytest.param(
            {"metadata": {"annotations": {"z": "1", "a": "<"}, "labels": {}, "creationTimestamp": None}, "spec": {"devices": {"requests": []}}},
            '{"metadata":{"annotations":{"a":"\\u003c","z":"1"}},"spec":{"devices":{"requests":[]}}}',
            id="maps-sorted-empty-map-omitted",
        ),
        pytest.param(
            {"metadata": {"creationTimestamp": "2025-01-02T03:04:05.678+01:00"}},
            '{"metadata":{"creationTimestamp":"2025-01-02T02:04:05Z"},"spec":{"devices":{"requests":null}}}',
            id="time-in-utc-to-the-second",
        ),
        pytest.param(
            {"spec": {"devices": {"requests": [REQUEST], "constraints": [{"matchAttribute": ""}],
                                  "config": [{"requests": ["gpu"], "opaque": {"driver": "d", "parameters": {"b": 1.0, "a": [None]}}}]}}},
            '{"metadata":{},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}],'
            '"constraints":[{"matchAttribute":""}],"config":[{"requests":["gpu"],"opaque":{"driver":"d","parameters":{"b":1,"a":[null]}}}]}}}',
            id="pointer-to-empty-string-kept-parameters-in-given-order",
        ),
        pytest.param(
            {"spec": {"devices": {"requests": [{"name": "g", "firstAvailable": [{"name": "a", "deviceClassName": "c",
                                                                                 "capacity": {"requests": {"mem": "1024Mi"}}}]}]}}},
            '{"metadata":{},"spec":{"devices":{"requests":[{"name":"g","firstAvailable":[{"name":"a","deviceClassName":"c",'
            '"capacity":{"requests":{"mem":"1Gi"}}}]}]}}}',
            id="sub-request-with-canonical-quantity",
        ),
    ],
)
def test_printed_as_json_marshal(spec: dict[str, Any], expected: str) -> None:
    assert printed(spec) == expected


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        pytest.param({"spec": "x"}, "templateSpec.spec: cannot unmarshal string into a Go value of type v1.ResourceClaimSpec", id="struct"),
        pytest.param({"spec": {"devices": {"requests": {}}}}, "templateSpec.spec.devices.requests: cannot unmarshal object into a Go value of type []v1.DeviceRequest", id="slice"),
        pytest.param(
            {"spec": {"devices": {"requests": [{"name": 1}]}}},
            "templateSpec.spec.devices.requests[0].name: cannot unmarshal number into a Go value of type string",
            id="string",
        ),
        pytest.param(
            {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"count": "2"}}]}}},
            "templateSpec.spec.devices.requests[0].exactly.count: cannot unmarshal string into a Go value of type int64",
            id="int",
        ),
        pytest.param(
            {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"count": 1.5}}]}}},
            "templateSpec.spec.devices.requests[0].exactly.count: cannot unmarshal number into a Go value of type int64",
            id="float-for-int",
        ),
        pytest.param(
            {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"count": 2**63}}]}}},
            f"templateSpec.spec.devices.requests[0].exactly.count: cannot unmarshal number {2**63} into a Go value of type int64",
            id="int-out-of-range",
        ),
        pytest.param(
            {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"adminAccess": "yes"}}]}}},
            "templateSpec.spec.devices.requests[0].exactly.adminAccess: cannot unmarshal string into a Go value of type bool",
            id="bool",
        ),
        pytest.param(
            {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"capacity": {"requests": {"m": "lots"}}}}]}}},
            'templateSpec.spec.devices.requests[0].exactly.capacity.requests.m: invalid quantity "lots"',
            id="quantity",
        ),
        pytest.param({"metadata": {"labels": {"a": 1}}}, "templateSpec.metadata.labels.a: cannot unmarshal number into a Go value of type string", id="map-value"),
        pytest.param({"metadata": {"creationTimestamp": "yesterday"}}, 'templateSpec.metadata.creationTimestamp: invalid RFC 3339 time "yesterday"', id="time"),
    ],
)
def test_what_go_refuses_to_decode(spec: dict[str, Any], problem: str) -> None:
    with pytest.raises(DecodeError) as raised:
        dra.decode_templates([spec])
    assert raised.value.at(dra.PATH) == f"spec.template.resourceClaimTemplates[0].{problem}"


def test_parameters_take_any_json() -> None:
    for parameters in ({"a": 1}, [1, "x"], "text", 3, True, None):
        spec = {"spec": {"devices": {"requests": [REQUEST], "config": [{"opaque": {"driver": "d", "parameters": parameters}}]}}}
        assert dra.decode_templates([spec]) is not None


def equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    decoded = dra.decode_templates([a, b])
    assert decoded is not None
    return semantic_equal(dra.TEMPLATE_SPEC, decoded[0], decoded[1])


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        pytest.param({}, {"metadata": {}, "spec": {"devices": {"requests": []}}}, True, id="absent-equals-empty"),
        pytest.param({"metadata": {"labels": {}}}, {"metadata": {"labels": None}}, True, id="empty-map-equals-nil"),
        pytest.param({"metadata": {"labels": {"a": "1", "b": "2"}}}, {"metadata": {"labels": {"b": "2", "a": "1"}}}, True, id="map-order-irrelevant"),
        pytest.param(
            {"metadata": {"creationTimestamp": "2025-01-01T01:00:00+01:00"}}, {"metadata": {"creationTimestamp": "2025-01-01T00:00:00Z"}}, True,
            id="same-instant",
        ),
        pytest.param(
            {"spec": {"devices": {"constraints": [{"matchAttribute": ""}]}}}, {"spec": {"devices": {"constraints": [{}]}}}, False,
            id="pointer-to-empty-differs-from-nil",
        ),
        pytest.param(
            {"spec": {"devices": {"requests": [{"name": "a"}, {"name": "b"}]}}}, {"spec": {"devices": {"requests": [{"name": "b"}, {"name": "a"}]}}},
            False, id="list-order-matters",
        ),
    ],
)
def test_semantic_deep_equal(a: dict[str, Any], b: dict[str, Any], same: bool) -> None:
    assert equal(a, b) is same


_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**65), 2**65) | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)


def _values(go_type: GoType) -> st.SearchStrategy[Any]:
    """Values of ``go_type`` with any member, at any depth, possibly of another JSON type."""
    if isinstance(go_type, Ptr):
        return _values(go_type.to)
    if isinstance(go_type, Slice):
        shaped: st.SearchStrategy[Any] = st.lists(st.deferred(lambda: _values(go_type.item)), max_size=2)
    elif isinstance(go_type, Map):
        shaped = st.dictionaries(st.text(max_size=2), st.deferred(lambda: _values(go_type.value)), max_size=2)
    elif isinstance(go_type, Struct):
        shaped = st.fixed_dictionaries({}, optional={f.name: st.deferred(lambda t=f.type: _values(t)) for f in go_type.fields})
    elif isinstance(go_type, Scalar):
        shaped = st.from_type(go_type.kind) if go_type.kind is not int else st.integers(-(2**64), 2**64)
    else:
        shaped = st.sampled_from(["1Gi", "2025-01-02T03:04:05Z", "x", ""])
    return st.one_of(shaped, shaped, _ANY_JSON)
