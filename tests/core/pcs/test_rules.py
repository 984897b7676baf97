"""Grove's create-time resource-sharing rules (BEHAVIOUR.md §2.5 to §2.9): every rule at every
level it applies to, with the exact rendered message, and several errors in Grove's order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from core.podcliquesets import Object, create, denial, workload
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.pcs.rules import validate_create as validate

Change = Callable[[Object], Any]
NS_DETAIL = "namespace must be empty when name matches an internal resourceClaimTemplate"
SUPPORTED = 'supported values: "AllReplicas", "PerReplica"'


def messages(change: Change) -> list[str]:
    pcs = workload()
    change(pcs)
    return [str(e) for e in validate(read_podcliqueset(pcs).spec)]


def template(pcs: Object) -> Object:
    value: Object = pcs["spec"]["template"]
    return value


def templates(pcs: Object) -> list[Object]:
    value: list[Object] = template(pcs)["resourceClaimTemplates"]
    return value


def requests_of(pcs: Object, i: int) -> Object:
    devices: Object = templates(pcs)[i]["templateSpec"]["spec"]["devices"]
    return devices


def test_the_workload_has_no_errors() -> None:
    assert messages(lambda pcs: None) == []


# --- §2.5 templates -------------------------------------------------------------------------------

T = "spec.template.resourceClaimTemplates"
T1 = "Required value: template name is required"
T2 = "Required value: at least one device request is required"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(lambda p: templates(p)[3].update(name=""), [f"{T}[3].name: {T1}"], id="t1-empty-name"),
        pytest.param(lambda p: requests_of(p, 1).update(requests=[]), [f"{T}[1].templateSpec.spec.devices.requests: {T2}"], id="t2-empty-requests"),
        pytest.param(lambda p: requests_of(p, 1).update(requests=None), [f"{T}[1].templateSpec.spec.devices.requests: {T2}"], id="t2-null-requests"),
        pytest.param(lambda p: requests_of(p, 1).clear(), [f"{T}[1].templateSpec.spec.devices.requests: {T2}"], id="t2-no-requests-key"),
        pytest.param(lambda p: templates(p)[1]["templateSpec"].update(spec={}), [f"{T}[1].templateSpec.spec.devices.requests: {T2}"], id="t2-empty-spec"),
        pytest.param(
            lambda p: (templates(p)[2].update(name=""), requests_of(p, 2).update(requests=[])),
            [f"{T}[2].name: {T1}", f"{T}[2].templateSpec.spec.devices.requests: {T2}"],
            id="t1-then-t2-for-one-template",
        ),
        pytest.param(lambda p: templates(p)[2].update(name="int-tpl2"), [f'{T}.name: Duplicate value: ["int-tpl2"]'], id="t3-one-duplicate"),
        pytest.param(
            lambda p: [templates(p)[i].update(name=n) for i, n in ((2, "int-tpl2"), (3, "int-tpl"), (4, "int-tpl2"), (5, "int-tpl"))],
            [f'{T}.name: Duplicate value: ["int-tpl","int-tpl2"]'],
            id="t3-each-duplicate-once-in-order-of-first-occurrence",
        ),
        pytest.param(
            lambda p: [templates(p)[i].update(name="") for i in (0, 4)],
            [f"{T}[0].name: {T1}", f"{T}[4].name: {T1}", f'{T}.name: Duplicate value: [""]'],
            id="t3-empty-names-are-duplicates-too",
        ),
        pytest.param(
            lambda p: [templates(p)[i].update(name="<gpu>&") for i in (0, 1)],
            [f'{T}.name: Duplicate value: ["\\u003cgpu\\u003e\\u0026"]'],
            id="t3-value-printed-as-json",
        ),
    ],
)
def test_template_rules(change: Change, expected: list[str]) -> None:
    assert messages(change) == expected


# --- §2.6 the entry checks, at every level --------------------------------------------------------

LEVELS: dict[str, tuple[str, Callable[[Object], list[Object]]]] = {
    "pcs": ("spec.template.resourceSharing", lambda p: template(p)["resourceSharing"]),
    "clique": ("spec.template.cliques[1].resourceSharing", lambda p: template(p)["cliques"][1]["resourceSharing"]),
    "scaling-group": (
        "spec.template.podCliqueScalingGroups[0].resourceSharing",
        lambda p: template(p)["podCliqueScalingGroups"][0]["resourceSharing"],
    ),
}
"""Each level's first entry names an internal template (int-tpl5, int-tpl6, int-tpl2)."""

EntryChange = Callable[[list[Object]], Any]
ENTRY_CASES: list[tuple[str, EntryChange, Callable[[str, list[Object]], list[str]]]] = [
    ("r1-empty-name", lambda e: e[0].update(name=""), lambda p, e: [f"{p}[0].name: Required value: reference name is required"]),
    (
        "r2-repeated-name-other-scope",
        lambda e: e.append({"name": e[0]["name"], "scope": "PerReplica"}),
        lambda p, e: [f'{p}[{len(e) - 1}].name: Duplicate value: "{e[0]["name"]}"'],
    ),
    (
        "r2-repeated-name-in-another-namespace-is-still-a-duplicate",
        lambda e: e.extend([{"name": "ext-x", "namespace": "a", "scope": "AllReplicas"}, {"name": "ext-x", "namespace": "b", "scope": "AllReplicas"}]),
        lambda p, e: [f'{p}[{len(e) - 1}].name: Duplicate value: "ext-x"'],
    ),
    (
        "r2-not-for-empty-names",
        lambda e: [x.update(name="") for x in e],
        lambda p, e: [f"{p}[{i}].name: Required value: reference name is required" for i in range(len(e))],
    ),
    (
        "r3-namespace-with-internal-template",
        lambda e: e[0].update(namespace="rs-shared"),
        lambda p, e: [f'{p}[0].namespace: Invalid value: "rs-shared": {NS_DETAIL}'],
    ),
    (
        "r3-namespace-printed-with-q",
        lambda e: e[0].update(namespace='a"<b>\x01'),
        lambda p, e: [f'{p}[0].namespace: Invalid value: "a\\"<b>\\x01": {NS_DETAIL}'],
    ),
    ("r3-not-for-an-external-template", lambda e: e[0].update(name="ext-gpu", namespace="rs-shared"), lambda p, e: []),
    ("r4-unknown-scope", lambda e: e[0].update(scope="PerPod"), lambda p, e: [f'{p}[0].scope: Unsupported value: "PerPod": {SUPPORTED}']),
    ("r4-empty-scope", lambda e: e[0].update(scope=""), lambda p, e: [f'{p}[0].scope: Unsupported value: "": {SUPPORTED}']),
    ("r4-missing-scope", lambda e: e[0].pop("scope"), lambda p, e: [f'{p}[0].scope: Unsupported value: "": {SUPPORTED}']),
    ("r4-case-matters", lambda e: e[0].update(scope="allreplicas"), lambda p, e: [f'{p}[0].scope: Unsupported value: "allreplicas": {SUPPORTED}']),
    (
        "r4-scope-printed-as-json",
        lambda e: e[0].update(scope="<All>\x01"),
        lambda p, e: [f'{p}[0].scope: Unsupported value: "\\u003cAll\\u003e\\u0001": {SUPPORTED}'],
    ),
    (
        "r1-and-r4-not-r3-for-an-empty-name",
        lambda e: e[0].update(name="", namespace="rs-shared", scope=""),
        lambda p, e: [f"{p}[0].name: Required value: reference name is required", f'{p}[0].scope: Unsupported value: "": {SUPPORTED}'],
    ),
    (
        "r2-r3-r4-on-one-entry-in-that-order",
        lambda e: e.append({"name": e[0]["name"], "namespace": "ns", "scope": "Both"}),
        lambda p, e: [
            f'{p}[{len(e) - 1}].name: Duplicate value: "{e[0]["name"]}"',
            f'{p}[{len(e) - 1}].namespace: Invalid value: "ns": {NS_DETAIL}',
            f'{p}[{len(e) - 1}].scope: Unsupported value: "Both": {SUPPORTED}',
        ],
    ),
]


@pytest.mark.parametrize("level", list(LEVELS))
@pytest.mark.parametrize(("change", "expected"), [pytest.param(c, x, id=i) for i, c, x in ENTRY_CASES])
def test_entry_rules_at_every_level(level: str, change: EntryChange, expected: Callable[[str, list[Object]], list[str]]) -> None:
    path, entries_of = LEVELS[level]
    pcs = workload()
    change(entries_of(pcs))
    assert [str(e) for e in validate(read_podcliqueset(pcs).spec)] == expected(path, entries_of(pcs))


def test_the_same_template_name_at_different_levels_is_allowed() -> None:
    def share_everywhere(pcs: Object) -> None:
        for _, entries_of in LEVELS.values():
            entries_of(pcs).append({"name": "int-tpl4", "scope": "AllReplicas"})

    assert messages(share_everywhere) == []


# --- §2.7 and §2.8 filters ------------------------------------------------------------------------

PF = "spec.template.resourceSharing"
GF = "spec.template.podCliqueScalingGroups[0].resourceSharing"
F1 = "Required value: filter must specify at least one childCliqueNames or childScalingGroupNames entry"
G1 = "Required value: filter must specify at least one childCliqueNames entry"


def pcs_filter(index: int, value: Any) -> Change:
    return lambda p: template(p)["resourceSharing"][index].update(filter=value)


def group_filter(value: Any) -> Change:
    return lambda p: template(p)["podCliqueScalingGroups"][0]["resourceSharing"][2].update(filter=value)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(pcs_filter(2, {}), [f"{PF}[2].filter: {F1}"], id="f1-empty-filter"),
        pytest.param(pcs_filter(2, {"childCliqueNames": [], "childScalingGroupNames": None}), [f"{PF}[2].filter: {F1}"], id="f1-empty-lists"),
        pytest.param(pcs_filter(2, None), [], id="null-filter-is-no-filter"),
        pytest.param(
            pcs_filter(2, {"childCliqueNames": ["worker-a", "worker-c", "sga"]}),
            [f'{PF}[2].filter.childCliqueNames[1]: Not found: "worker-c"', f'{PF}[2].filter.childCliqueNames[2]: Not found: "sga"'],
            id="f2-unknown-clique-and-a-group-name",
        ),
        pytest.param(pcs_filter(2, {"childCliqueNames": ["worker-b"]}), [], id="f2-a-scaling-group-member-is-a-clique"),
        pytest.param(
            pcs_filter(3, {"childScalingGroupNames": ["sga", "worker-a"]}),
            [f'{PF}[3].filter.childScalingGroupNames[1]: Not found: "worker-a"'],
            id="f3-clique-name-is-not-a-group",
        ),
        pytest.param(
            pcs_filter(3, {"childCliqueNames": ["nope"], "childScalingGroupNames": ["sgb"]}),
            [f'{PF}[3].filter.childCliqueNames[0]: Not found: "nope"', f'{PF}[3].filter.childScalingGroupNames[0]: Not found: "sgb"'],
            id="f2-then-f3",
        ),
        pytest.param(pcs_filter(3, {"childCliqueNames": ["a\tb"]}), [f'{PF}[3].filter.childCliqueNames[0]: Not found: "a\\tb"'], id="f2-value-with-q"),
        pytest.param(group_filter({}), [f"{GF}[2].filter: {G1}"], id="g1-empty-filter"),
        pytest.param(group_filter({"childCliqueNames": []}), [f"{GF}[2].filter: {G1}"], id="g1-empty-list"),
        pytest.param(
            group_filter({"childCliqueNames": ["worker-b", "worker-a", "nope"]}),
            [f'{GF}[2].filter.childCliqueNames[1]: Not found: "worker-a"', f'{GF}[2].filter.childCliqueNames[2]: Not found: "nope"'],
            id="g2-a-clique-outside-the-group",
        ),
        pytest.param(group_filter({"childScalingGroupNames": ["sga"]}), [f"{GF}[2].filter: {G1}"], id="g1-group-filter-has-no-group-list"),
    ],
)
def test_filter_rules(change: Change, expected: list[str]) -> None:
    assert messages(change) == expected


# --- §2.9 order and aggregation -------------------------------------------------------------------


def everything_wrong(pcs: Object) -> None:
    t = template(pcs)
    t["resourceClaimTemplates"][7]["templateSpec"]["spec"]["devices"]["requests"] = []
    t["resourceClaimTemplates"][6]["name"] = ""
    t["resourceClaimTemplates"][5]["name"] = "int-tpl"
    t["resourceSharing"][3]["filter"] = {}
    t["resourceSharing"][1]["scope"] = "Some"
    t["resourceSharing"][0]["namespace"] = "ns"
    t["cliques"][1]["resourceSharing"][0]["name"] = ""
    t["cliques"][0]["resourceSharing"][1]["scope"] = ""
    t["podCliqueScalingGroups"][0]["resourceSharing"][2]["filter"] = {"childCliqueNames": ["worker-a"]}
    t["podCliqueScalingGroups"][0]["resourceSharing"][1]["name"] = "int-tpl2"


def test_several_errors_in_groves_order() -> None:
    assert messages(everything_wrong) == [
        f"{T}[6].name: {T1}",
        f"{T}[7].templateSpec.spec.devices.requests: {T2}",
        f'{T}.name: Duplicate value: ["int-tpl"]',
        f'{PF}[0].namespace: Invalid value: "ns": {NS_DETAIL}',
        f'{PF}[1].scope: Unsupported value: "Some": {SUPPORTED}',
        f"{PF}[3].filter: {F1}",
        f'spec.template.cliques[0].resourceSharing[1].scope: Unsupported value: "": {SUPPORTED}',
        "spec.template.cliques[1].resourceSharing[0].name: Required value: reference name is required",
        f'{GF}[1].name: Duplicate value: "int-tpl2"',
        f'{GF}[2].filter.childCliqueNames[0]: Not found: "worker-a"',
    ]


def test_several_errors_are_one_denial_in_brackets() -> None:
    pcs = workload()
    everything_wrong(pcs)
    assert denial(create(pcs)) == "[" + ", ".join(messages(everything_wrong)) + "]"


def test_one_error_is_a_denial_without_brackets() -> None:
    pcs = workload()
    template(pcs)["resourceSharing"][1]["scope"] = "PerPod"
    response = create(pcs)
    assert response == {
        "uid": response["uid"],
        "allowed": False,
        "status": {"code": 403, "reason": "Forbidden", "message": f'{PF}[1].scope: Unsupported value: "PerPod": {SUPPORTED}'},
    }
