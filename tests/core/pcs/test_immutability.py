"""UPDATE: resource sharing is immutable (BEHAVIOUR.md §2.10), compared as Semantic.DeepEqual
compares and printed as json.Marshal prints, with the composition cases that change which errors
appear and the short-circuit of §2.2."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from core.podcliquesets import GPU_TEMPLATE, Object, denial, pcs_review, respond, small, update, workload
from webhook.core.gocompat.fielderrors import aggregate

Change = Callable[[Object], Any]
IMMUTABLE = "field is immutable"
U1 = "spec.template.resourceClaimTemplates: Invalid value: "
U2 = "spec.template.resourceSharing: Invalid value: "
U3 = "spec.template.podCliqueScalingGroups.resourceSharing: Invalid value: "
CLIQUE_COUNT = "spec.template.cliques: Forbidden: not allowed to change clique composition"
GROUP_COUNT = "spec.template.podCliqueScalingGroups: Forbidden: not allowed to add or remove PodCliqueScalingGroupConfigs"


def u4(index: int) -> str:
    return f"spec.template.cliques[{index}].resourceSharing: Invalid value: "


def new_clique(name: str) -> str:
    return f"spec.template.cliques.name: Forbidden: not allowed to change clique composition, new clique name '{name}' is not allowed"


def new_group(name: str) -> str:
    return (
        "spec.template.podCliqueScalingGroups.name: Forbidden: not allowed to change scaling group composition, "
        f"new scaling group name '{name}' is not allowed"
    )


def t(pcs: Object) -> Object:
    value: Object = pcs["spec"]["template"]
    return value


def device(pcs: Object, i: int = 0) -> Object:
    value: Object = t(pcs)["resourceClaimTemplates"][i]["templateSpec"]["spec"]["devices"]["requests"][0]["exactly"]
    return value


def gpu_json(exactly: str = '{"deviceClassName":"gpu.example.com"}', metadata: str = "{}", name: str = "gpu") -> str:
    return f'{{"name":"{name}","templateSpec":{{"metadata":{metadata},"spec":{{"devices":{{"requests":[{{"name":"gpu","exactly":{exactly}}}]}}}}}}}}'


def decided(change_new: Change, change_old: Change = lambda pcs: None, strict: bool = False) -> Object:
    old, new = small(), small()
    change_old(old)
    change_old(new)
    change_new(new)
    return update(new, old, strict)


def errors(change_new: Change, change_old: Change = lambda pcs: None) -> list[str]:
    """The denial's messages, or [] when the UPDATE is allowed."""
    response = decided(change_new, change_old)
    if response["allowed"]:
        return []
    message = denial(response)
    return [message]


def expect(*messages: str) -> list[str]:
    message = aggregate(list(messages))
    return [message] if message else []


def scaled(pcs: Object) -> None:
    pcs["spec"]["replicas"] = 5
    t(pcs)["cliques"][0]["spec"]["replicas"] = 3
    t(pcs)["podCliqueScalingGroups"][0]["replicas"] = 4


def two_templates(pcs: Object) -> None:
    second = {**GPU_TEMPLATE, "name": "nic"}
    t(pcs)["resourceClaimTemplates"].append(second)


def capacity(value: str) -> Change:
    return lambda pcs: device(pcs).update(capacity={"requests": {"memory": value}})


@pytest.mark.parametrize(
    ("change_new", "change_old", "expected"),
    [
        pytest.param(lambda p: None, lambda p: None, expect(), id="unchanged"),
        pytest.param(scaled, lambda p: None, expect(), id="replicas-may-change"),
        # U2: the PodCliqueSet list
        pytest.param(
            lambda p: t(p)["resourceSharing"][0].update(scope="PerReplica"),
            lambda p: None,
            expect(f'{U2}[{{"name":"gpu","scope":"PerReplica"}}]: {IMMUTABLE}'),
            id="u2-scope",
        ),
        pytest.param(
            lambda p: t(p)["resourceSharing"][0].update(name="ext", namespace="rs-shared"),
            lambda p: None,
            expect(f'{U2}[{{"name":"ext","namespace":"rs-shared","scope":"AllReplicas"}}]: {IMMUTABLE}'),
            id="u2-namespace-printed-between-name-and-scope",
        ),
        pytest.param(
            lambda p: t(p)["resourceSharing"][0].update(filter={"childCliqueNames": ["a"]}),
            lambda p: None,
            expect(f'{U2}[{{"name":"gpu","scope":"AllReplicas","filter":{{"childCliqueNames":["a"]}}}}]: {IMMUTABLE}'),
            id="u2-filter-added",
        ),
        pytest.param(
            lambda p: t(p)["resourceSharing"][0].update(filter={"childCliqueNames": ["a"], "childScalingGroupNames": []}),
            lambda p: t(p)["resourceSharing"][0].update(filter={"childCliqueNames": ["a"]}),
            expect(),
            id="u2-empty-filter-list-equals-absent",
        ),
        pytest.param(lambda p: t(p).pop("resourceSharing"), lambda p: None, expect(f"{U2}null: {IMMUTABLE}"), id="u2-removed-is-null"),
        pytest.param(lambda p: t(p).update(resourceSharing=[]), lambda p: None, expect(f"{U2}[]: {IMMUTABLE}"), id="u2-emptied"),
        pytest.param(lambda p: t(p).update(resourceSharing=[]), lambda p: t(p).pop("resourceSharing"), expect(), id="u2-empty-added-where-absent"),
        pytest.param(lambda p: t(p).pop("resourceSharing"), lambda p: t(p).update(resourceSharing=[]), expect(), id="u2-empty-removed"),
        pytest.param(
            lambda p: t(p)["resourceSharing"].reverse(),
            lambda p: t(p)["resourceSharing"].append({"name": "ext", "scope": "PerReplica"}),
            expect(f'{U2}[{{"name":"ext","scope":"PerReplica"}},{{"name":"gpu","scope":"AllReplicas"}}]: {IMMUTABLE}'),
            id="u2-reordered",
        ),
        # U4: a clique's list, matched by name, at its index in the new list
        pytest.param(
            lambda p: t(p)["cliques"][0]["resourceSharing"][0].update(scope="AllReplicas"),
            lambda p: None,
            expect(f'{u4(0)}[{{"name":"gpu","scope":"AllReplicas"}}]: {IMMUTABLE}'),
            id="u4-scope",
        ),
        pytest.param(
            lambda p: (t(p)["cliques"].reverse(), t(p)["cliques"][1]["resourceSharing"].clear()),
            lambda p: None,
            expect(f"{u4(1)}[]: {IMMUTABLE}"),
            id="u4-index-in-the-new-list",
        ),
        pytest.param(lambda p: t(p)["cliques"][0].pop("resourceSharing"), lambda p: None, expect(f"{u4(0)}null: {IMMUTABLE}"), id="u4-removed-is-null"),
        pytest.param(lambda p: t(p)["cliques"][1].update(resourceSharing=[]), lambda p: None, expect(), id="u4-empty-added-where-absent"),
        pytest.param(
            lambda p: t(p)["cliques"][1].update(resourceSharing=[{"name": "gpu", "scope": "PerReplica"}]),
            lambda p: None,
            expect(f'{u4(1)}[{{"name":"gpu","scope":"PerReplica"}}]: {IMMUTABLE}'),
            id="u4-entry-added",
        ),
        pytest.param(
            lambda p: (
                t(p)["cliques"][0]["resourceSharing"].clear(),
                t(p)["cliques"].append({**t(p)["cliques"][1], "name": "c", "resourceSharing": [{"name": "gpu", "scope": "AllReplicas"}]}),
            ),
            lambda p: None,
            expect(CLIQUE_COUNT, f"{u4(0)}[]: {IMMUTABLE}", new_clique("c")),
            id="clique-added-count-then-u4-then-new-name-without-u4",
        ),
        pytest.param(
            lambda p: t(p)["cliques"][0].update(name="a2", resourceSharing=[]),
            lambda p: None,
            expect(new_clique("a2")),
            id="clique-renamed-skips-its-u4",
        ),
        pytest.param(
            lambda p: t(p)["cliques"].pop(0),
            lambda p: None,
            expect(CLIQUE_COUNT),
            id="clique-removed",
        ),
        # U3: a scaling group's list, matched by name, no index in the path
        pytest.param(
            lambda p: t(p)["podCliqueScalingGroups"][0]["resourceSharing"][0].update(scope="PerReplica"),
            lambda p: None,
            expect(f'{U3}[{{"name":"gpu","scope":"PerReplica"}}]: {IMMUTABLE}'),
            id="u3-scope",
        ),
        pytest.param(
            lambda p: t(p)["podCliqueScalingGroups"][0].pop("resourceSharing"),
            lambda p: None,
            expect(f"{U3}null: {IMMUTABLE}"),
            id="u3-removed-is-null",
        ),
        pytest.param(
            lambda p: (
                t(p)["podCliqueScalingGroups"][0]["resourceSharing"].clear(),
                t(p)["podCliqueScalingGroups"].append({"name": "h", "cliqueNames": []}),
            ),
            lambda p: None,
            expect(GROUP_COUNT),
            id="group-added-returns-early-without-u3",
        ),
        pytest.param(
            lambda p: t(p)["podCliqueScalingGroups"][0].update(name="g2"),
            lambda p: None,
            expect(new_group("g2")),
            id="group-renamed",
        ),
        # U1: the templates, as Semantic.DeepEqual compares the Go structs
        pytest.param(
            lambda p: device(p).update(deviceClassName="other.example.com"),
            lambda p: None,
            expect(U1 + "[" + gpu_json(exactly='{"deviceClassName":"other.example.com"}') + "]: " + IMMUTABLE),
            id="u1-device-class",
        ),
        pytest.param(
            lambda p: t(p)["resourceClaimTemplates"][0]["templateSpec"].update(metadata={"labels": {"b": "2", "a": "1"}}),
            lambda p: None,
            expect(U1 + "[" + gpu_json(metadata='{"labels":{"a":"1","b":"2"}}') + "]: " + IMMUTABLE),
            id="u1-metadata-labels-sorted",
        ),
        pytest.param(lambda p: t(p).pop("resourceClaimTemplates"), lambda p: None, expect(f"{U1}null: {IMMUTABLE}"), id="u1-removed-is-null"),
        pytest.param(capacity("1073741824"), capacity("1Gi"), expect(), id="u1-quantity-compared-by-value"),
        pytest.param(
            capacity("2048Mi"),
            capacity("1Gi"),
            expect(
                U1 + "[" + gpu_json(exactly='{"deviceClassName":"gpu.example.com","capacity":{"requests":{"memory":"2Gi"}}}') + "]: " + IMMUTABLE
            ),
            id="u1-quantity-printed-canonically",
        ),
        pytest.param(lambda p: device(p).update(count=0), lambda p: None, expect(), id="u1-zero-count-equals-absent"),
        pytest.param(
            lambda p: device(p).update(adminAccess=False),
            lambda p: None,
            expect(U1 + "[" + gpu_json(exactly='{"deviceClassName":"gpu.example.com","adminAccess":false}') + "]: " + IMMUTABLE),
            id="u1-false-pointer-differs-from-absent",
        ),
        pytest.param(lambda p: device(p).update(selectors=[]), lambda p: None, expect(), id="u1-empty-list-equals-absent"),
        pytest.param(
            lambda p: t(p)["resourceClaimTemplates"].reverse(),
            two_templates,
            expect(f"{U1}[{gpu_json(name='nic')},{gpu_json()}]: {IMMUTABLE}"),
            id="u1-reordered",
        ),
        # order: cliques, scaling groups, templates, then the PodCliqueSet list
        pytest.param(
            lambda p: (
                t(p)["resourceSharing"][0].update(scope="PerReplica"),
                device(p).update(deviceClassName="x"),
                t(p)["podCliqueScalingGroups"][0]["resourceSharing"].clear(),
                t(p)["cliques"][0]["resourceSharing"].clear(),
            ),
            lambda p: None,
            expect(
                f"{u4(0)}[]: {IMMUTABLE}",
                f"{U3}[]: {IMMUTABLE}",
                U1 + "[" + gpu_json(exactly='{"deviceClassName":"x"}') + "]: " + IMMUTABLE,
                f'{U2}[{{"name":"gpu","scope":"PerReplica"}}]: {IMMUTABLE}',
            ),
            id="order-u4-u3-u1-u2",
        ),
    ],
)
def test_update_rules(change_new: Change, change_old: Change, expected: list[str]) -> None:
    assert errors(change_new, change_old) == expected


def opaque(parameters: Any) -> Change:
    def change(pcs: Object) -> None:
        devices = t(pcs)["resourceClaimTemplates"][0]["templateSpec"]["spec"]["devices"]
        devices["config"] = [{"opaque": {"driver": "gpu.example.com", "parameters": parameters}}]

    return change


@pytest.mark.parametrize(
    ("new", "old", "shown"),
    [
        pytest.param({"a": 1, "b": [1.5]}, {"a": 1, "b": [1.5]}, None, id="same-parameters"),
        pytest.param({"b": 2, "a": 1}, {"a": 1, "b": 2}, '{"b":2,"a":1}', id="key-order-is-a-change-and-kept"),
        pytest.param({"html": "<&>"}, None, '{"html":"\\u003c\\u0026\\u003e"}', id="printed-html-safe"),
        pytest.param(None, {"a": 1}, "null", id="nil-parameters"),
    ],
)
def test_opaque_parameters_compare_and_print_as_raw_json(new: Any, old: Any, shown: str | None) -> None:
    """``parameters`` is a RawExtension: Go compares and prints the JSON as it came."""
    found = errors(opaque(new), lambda pcs: None) if old is None else errors(opaque(new), opaque(old))
    if shown is None:
        assert found == []
    else:
        config = f'"config":[{{"opaque":{{"driver":"gpu.example.com","parameters":{shown}}}}}]'
        exactly = '{"deviceClassName":"gpu.example.com"}'
        body = f'{{"requests":[{{"name":"gpu","exactly":{exactly}}}],{config}}}'
        assert found == [f'{U1}[{{"name":"gpu","templateSpec":{{"metadata":{{}},"spec":{{"devices":{body}}}}}}}]: {IMMUTABLE}']


def test_step_h_of_groves_end_to_end_test() -> None:
    """BEHAVIOUR.md §7.2 step H: the scope of int-tpl5 flipped in a full UPDATE."""
    old, new = workload(), workload()
    t(new)["resourceSharing"][0]["scope"] = "PerReplica"
    assert denial(update(new, old)) == (
        'spec.template.resourceSharing: Invalid value: [{"name":"int-tpl5","scope":"PerReplica"},'
        '{"name":"ext-tpl","scope":"PerReplica"},{"name":"int-tpl","scope":"PerReplica","filter":{"childCliqueNames":["worker-a"]}},'
        '{"name":"int-tpl7","scope":"AllReplicas","filter":{"childScalingGroupNames":["sga"]}}]: field is immutable'
    )


@pytest.mark.parametrize(
    ("change_new", "expected"),
    [
        pytest.param(
            lambda p: t(p)["resourceSharing"][0].update(scope="Bogus"),
            'spec.template.resourceSharing[0].scope: Unsupported value: "Bogus": supported values: "AllReplicas", "PerReplica"',
            id="create-time-error-hides-u2",
        ),
        pytest.param(
            lambda p: (t(p)["cliques"][0].update(name="a2"), t(p)["cliques"][0]["resourceSharing"][0].update(name="")),
            "spec.template.cliques[0].resourceSharing[0].name: Required value: reference name is required",
            id="create-time-error-hides-composition",
        ),
    ],
)
def test_create_time_errors_short_circuit_the_update(change_new: Change, expected: str) -> None:
    assert errors(change_new) == [expected]


def test_strict_warnings_short_circuit_the_update_too() -> None:
    def flip(pcs: Object) -> None:
        t(pcs)["resourceSharing"][0]["scope"] = "PerReplica"

    def long_name(pcs: Object) -> None:
        pcs["metadata"]["name"] = "p" * 60

    lenient = decided(flip, long_name)
    strict = decided(flip, long_name, strict=True)
    assert denial(lenient).startswith(U2)
    assert lenient["warnings"]
    assert denial(strict) == aggregate(lenient["warnings"])
    assert "warnings" not in strict


def test_templates_sent_with_their_members_in_another_order_are_the_same() -> None:
    """Templates are compared as the JSON text they were sent as and, where the texts differ,
    decoded: a struct's members in another order are the same template (a RawExtension's are
    not, above)."""
    old, new = small(), small()
    sent = t(new)["resourceClaimTemplates"][0]
    t(new)["resourceClaimTemplates"][0] = {"templateSpec": {"spec": sent["templateSpec"]["spec"]}, "name": sent["name"]}
    assert update(new, old)["allowed"] is True
    t(new)["resourceClaimTemplates"][0]["templateSpec"]["spec"]["devices"]["requests"][0]["name"] = "other"
    assert denial(update(new, old)).startswith(U1)


def as_written(new: str, old: str | None) -> Object:
    """An UPDATE whose parameters are the JSON texts given, byte for byte, as a client may write them."""
    old_pcs, new_pcs = small(), small()
    opaque("NEW")(new_pcs)
    if old is not None:
        opaque("OLD")(old_pcs)
    text = orjson.dumps(pcs_review(new_pcs, operation="UPDATE", old=old_pcs)).replace(b'"NEW"', new.encode())
    return respond(text.replace(b'"OLD"', (old or "").encode()))


@pytest.mark.parametrize(
    ("new", "old", "shown"),
    [
        pytest.param('{"a":2.50,"b":1e3,"c":-0.0,"d":"\\u00e9", "e": [1.0E+2, 0.10]}', None,
                     '{"a":2.50,"b":1e3,"c":-0.0,"d":"\\u00e9","e":[1.0E+2,0.10]}', id="numbers-and-escapes-as-written"),
        pytest.param('{"a":2.50}', '{"a":2.5}', '{"a":2.50}', id="same-number-written-otherwise-is-a-change"),
        pytest.param('{"a": 2.5}', '{"a":2.5}', '{"a":2.5}', id="spaces-are-a-change-and-printed-compact"),
        pytest.param('{"a":2.5, "b":"<&> x"}', '{"a":2.5}', '{"a":2.5,"b":"\\u003c\\u0026\\u003e x"}', id="compacted-html-safe"),
        pytest.param(' {"a":2.5}', '{"a":2.5}', None, id="spaces-around-the-value-are-not-kept"),
    ],
)
def test_opaque_parameters_are_compared_and_printed_as_written(new: str, old: str | None, shown: str | None) -> None:
    """A RawExtension holds the bytes its decoder was given: Grove (its own code, perf/groveref)
    denies a change of spelling alone and prints the parameters as written, compacted."""
    found = as_written(new, old)
    if shown is None:
        assert found["allowed"] is True
        return
    config = f'"config":[{{"opaque":{{"driver":"gpu.example.com","parameters":{shown}}}}}]'
    body = f'{{"requests":[{{"name":"gpu","exactly":{{"deviceClassName":"gpu.example.com"}}}}],{config}}}'
    assert denial(found) == f'{U1}[{{"name":"gpu","templateSpec":{{"metadata":{{}},"spec":{{"devices":{body}}}}}}}]: {IMMUTABLE}'


@pytest.mark.parametrize("where", ["pcs", "clique", "group"])
def test_sharing_set_to_null_is_printed_null(where: str) -> None:
    """Go's nil slice marshals as ``null`` (Grove: ``Invalid value: null: field is immutable``)."""
    old, new = workload(), workload()
    holder = {"pcs": t(new), "clique": t(new)["cliques"][0], "group": t(new)["podCliqueScalingGroups"][0]}[where]
    holder["resourceSharing"] = None
    path = {"pcs": U2, "clique": u4(0), "group": U3}[where]
    assert denial(update(new, old)) == f"{path}null: {IMMUTABLE}"
