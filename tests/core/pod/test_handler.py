"""The mutating webhook's decisions, on the pods Grove builds for its end-to-end workload (§7)."""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping
from typing import Any, Literal

import jsonpatch
import orjson
import pytest

from core.answers import Source, mutated
from core.workload import grove_pod, pod_review, workload_pcs, workload_pcs_raw
from webhook.core.admission import Answer
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset

Store = Mapping[tuple[str, str], PodCliqueSet]


def mutate(body: bytes | dict[str, Any], store: Store | Source, on_missing_pcs: Literal["deny", "allow"] = "deny") -> Answer:
    """The answer, with ``store`` holding the PodCliqueSets."""
    return mutated(body, store if isinstance(store, Source) else store.values(), on_missing_pcs)


def response(decision: Answer) -> dict[str, Any]:
    assert decision.status == 200
    return decision.body["response"]


def patched_pod(pod: dict[str, Any], decision: Answer) -> dict[str, Any]:
    """The pod as the API server stores it after applying the answer's patch."""
    answer = response(decision)
    assert answer["allowed"] is True
    if "patch" not in answer:
        return pod
    assert answer["patchType"] == "JSONPatch"
    return jsonpatch.apply_patch(pod, orjson.loads(base64.b64decode(answer["patch"])))


def assert_claims(pod: dict[str, Any], expected: list[str]) -> None:
    """§7's check, tightened to order: the pod and every (init) container list exactly ``expected``
    after what was there before, except ``grove-initc``."""
    spec = pod["spec"]
    assert [c["name"] for c in spec["resourceClaims"]] == expected
    assert all(c["resourceClaimName"] == c["name"] for c in spec["resourceClaims"])
    for container in spec["containers"] + [c for c in spec.get("initContainers", []) if c["name"] != "grove-initc"]:
        assert [c["name"] for c in container["resources"]["claims"]] == expected, container["name"]


def store_of(*objects: PodCliqueSet) -> dict[tuple[str, str], PodCliqueSet]:
    """What a store holds for ``objects``."""
    return {pcs.key: pcs for pcs in objects}


# --- §7: every pod of every step -------------------------------------------------------------------


def worker_a(i: int, k: int) -> list[str]:
    """§5.5: a standalone worker-a pod with pod index k in PodCliqueSet replica i."""
    return [
        "rs-test-all-int-tpl5",
        f"rs-test-{i}-ext-tpl",
        f"rs-test-{i}-int-tpl",
        f"rs-test-{i}-worker-a-all-ext-ns-tpl",
        f"rs-test-{i}-worker-a-{k}-int-tpl4",
    ]


def worker_b(i: int, j: int) -> list[str]:
    """§5.5: the worker-b pod of scaling-group replica j in PodCliqueSet replica i."""
    return [
        "rs-test-all-int-tpl5",
        "rs-test-all-int-tpl7",
        f"rs-test-{i}-ext-tpl",
        f"rs-test-{i}-sga-all-int-tpl2",
        f"rs-test-{i}-sga-all-int-tpl8",
        f"rs-test-{i}-sga-{j}-int-tpl3",
        f"rs-test-{i}-sga-{j}-worker-b-all-int-tpl6",
    ]


# step: (PCS replicas, {i: sga replicas}, {i: worker-a replicas}, expected pod count)
STEPS = {
    "A initial": (1, {0: 2}, {0: 1}, 3),
    "B sga 2 to 1": (1, {0: 1}, {0: 1}, 2),
    "C sga 1 to 3": (1, {0: 3}, {0: 1}, 4),
    "D worker-a 1 to 2": (1, {0: 3}, {0: 2}, 5),
    "E worker-a 2 to 1": (1, {0: 3}, {0: 1}, 4),
    "F pcs 1 to 2": (2, {0: 3, 1: 2}, {0: 1, 1: 1}, 7),
    "G pcs 2 to 1": (1, {0: 3}, {0: 1}, 4),
}


def step_pods(step: str) -> list[tuple[str, int, dict[str, Any], list[str]]]:
    """(step, PCS replicas, pod, expected claims) for every pod Grove runs at that step."""
    replicas, groups, cliques, _ = STEPS[step]
    raw = workload_pcs_raw(replicas)
    pods = []
    for i in range(replicas):
        pods += [(step, replicas, grove_pod(raw, i, "worker-a", k), worker_a(i, k)) for k in range(cliques[i])]
        pods += [(step, replicas, grove_pod(raw, i, "worker-b", 0, "sga", j), worker_b(i, j)) for j in range(groups[i])]
    return pods


E2E = [p for step in STEPS for p in step_pods(step)]


def e2e_id(case: tuple[str, int, dict[str, Any], list[str]]) -> str:
    step, _, pod, _ = case
    pod_labels = pod["metadata"]["labels"]
    return f"{step.split()[0]}:{pod_labels['grove.io/podclique']}/{pod_labels['grove.io/podclique-pod-index']}"


@pytest.mark.parametrize("step", STEPS)
def test_every_step_runs_the_pods_of_section_7(step: str) -> None:
    assert len(step_pods(step)) == STEPS[step][3]


@pytest.mark.parametrize("case", E2E, ids=[e2e_id(c) for c in E2E])
def test_e2e_pod_gets_exactly_its_claims_in_grove_order(case: tuple[str, int, dict[str, Any], list[str]]) -> None:
    _, replicas, pod, expected = case
    store = store_of(workload_pcs(replicas))
    after = patched_pod(pod, mutate(pod_review(pod), store))
    assert_claims(after, expected)
    assert after["spec"]["containers"][0]["resources"]["requests"] == {"memory": "80Mi"}

    again = mutate(pod_review(after), store)
    assert response(again) == {"uid": "7f0b2c4e-0001", "allowed": True, "status": {"code": 200}}


def test_step_a_claims_are_the_published_ones() -> None:
    """§7 step A's table, spelled out, against the same pods."""
    raw, store = workload_pcs_raw(), store_of(workload_pcs())
    published = {
        "rs-test-0-worker-a": [
            "rs-test-all-int-tpl5", "rs-test-0-ext-tpl", "rs-test-0-int-tpl",
            "rs-test-0-worker-a-all-ext-ns-tpl", "rs-test-0-worker-a-0-int-tpl4",
        ],
        "rs-test-0-sga-0-worker-b": [
            "rs-test-all-int-tpl5", "rs-test-all-int-tpl7", "rs-test-0-ext-tpl", "rs-test-0-sga-all-int-tpl2",
            "rs-test-0-sga-all-int-tpl8", "rs-test-0-sga-0-int-tpl3", "rs-test-0-sga-0-worker-b-all-int-tpl6",
        ],
        "rs-test-0-sga-1-worker-b": [
            "rs-test-all-int-tpl5", "rs-test-all-int-tpl7", "rs-test-0-ext-tpl", "rs-test-0-sga-all-int-tpl2",
            "rs-test-0-sga-all-int-tpl8", "rs-test-0-sga-1-int-tpl3", "rs-test-0-sga-1-worker-b-all-int-tpl6",
        ],
    }
    pods = [grove_pod(raw, 0, "worker-a", 0), grove_pod(raw, 0, "worker-b", 0, "sga", 0), grove_pod(raw, 0, "worker-b", 0, "sga", 1)]
    for pod in pods:
        assert_claims(patched_pod(pod, mutate(pod_review(pod), store)), published[pod["metadata"]["labels"]["grove.io/podclique"]])


def test_init_containers_get_the_claims_but_grove_initc_does_not() -> None:
    pod = grove_pod(workload_pcs_raw(), 0, "worker-b", 0, "sga", 1)
    pod["spec"]["containers"].append({"name": "sidecar", "image": "busybox", "resources": {"limits": {"cpu": "1"}}})
    pod["spec"]["initContainers"] = [{"name": "setup", "image": "busybox"}, {"name": "grove-initc", "image": "initc"}]
    after = patched_pod(pod, mutate(pod_review(pod), store_of(workload_pcs())))
    assert_claims(after, worker_b(0, 1))
    assert after["spec"]["initContainers"][1] == {"name": "grove-initc", "image": "initc"}
    assert after["spec"]["containers"][1]["resources"]["limits"] == {"cpu": "1"}


def test_pre_existing_claims_are_kept_and_not_repeated() -> None:
    pod = grove_pod(workload_pcs_raw(), 0, "worker-a", 0)
    pod["spec"]["resourceClaims"] = [
        {"name": "mnnvl-claim", "resourceClaimTemplateName": "mnnvl"},
        {"name": "rs-test-0-ext-tpl", "resourceClaimName": "rs-test-0-ext-tpl"},
    ]
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "mnnvl-claim"}]
    after = patched_pod(pod, mutate(pod_review(pod), store_of(workload_pcs())))
    assert [c["name"] for c in after["spec"]["resourceClaims"]] == [
        "mnnvl-claim",
        "rs-test-0-ext-tpl",
        "rs-test-all-int-tpl5",
        "rs-test-0-int-tpl",
        "rs-test-0-worker-a-all-ext-ns-tpl",
        "rs-test-0-worker-a-0-int-tpl4",
    ]
    assert after["spec"]["resourceClaims"][0] == {"name": "mnnvl-claim", "resourceClaimTemplateName": "mnnvl"}
    assert [c["name"] for c in after["spec"]["containers"][0]["resources"]["claims"]] == ["mnnvl-claim", *worker_a(0, 0)]


# --- filters ----------------------------------------------------------------------------------------

FILTERED = {
    "apiVersion": "grove.io/v1alpha1",
    "kind": "PodCliqueSet",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {
        "replicas": 1,
        "template": {
            "resourceSharing": [
                {"name": "e0", "scope": "AllReplicas", "filter": {"childCliqueNames": ["b"]}},
                {"name": "e1", "scope": "AllReplicas", "filter": {"childScalingGroupNames": ["shared"]}},
                {"name": "e2", "scope": "PerReplica", "filter": {"childCliqueNames": ["shared"]}},
                {"name": "e3", "scope": "AllReplicas", "filter": {"childScalingGroupNames": ["a"]}},
                {"name": "e4", "scope": "AllReplicas", "filter": {}},
                {"name": "e5", "scope": "PerReplica"},
            ],
            "cliques": [
                {"name": "a", "spec": {"replicas": 1, "podSpec": {"containers": [{"name": "a"}]}}},
                {"name": "shared", "spec": {"replicas": 1, "podSpec": {"containers": [{"name": "s"}]}}},
                {"name": "b", "spec": {"replicas": 1, "podSpec": {"containers": [{"name": "b"}]}}},
                {"name": "c", "spec": {"replicas": 1, "podSpec": {"containers": [{"name": "c"}]}}},
            ],
            "podCliqueScalingGroups": [
                {
                    "name": "shared",
                    "replicas": 2,
                    "cliqueNames": ["b", "c"],
                    "resourceSharing": [
                        {"name": "f0", "scope": "AllReplicas", "filter": {"childCliqueNames": ["b"]}},
                        {"name": "f1", "scope": "AllReplicas", "filter": {"childCliqueNames": ["c"]}},
                        {"name": "f2", "scope": "PerReplica"},
                    ],
                }
            ],
        },
    },
}

FILTER_CASES = [
    ("PCS clique list names a scaling group, group list names a clique", ("a", None, 0), ["p-all-e3", "p-0-e5"]),
    ("standalone clique named like a scaling group matches both lists", ("shared", None, 0), ["p-all-e1", "p-0-e2", "p-0-e5"]),
    (
        "member matches by clique and by group name; group filter names it",
        ("b", "shared", 1),
        ["p-all-e0", "p-all-e1", "p-0-e2", "p-0-e5", "p-0-shared-all-f0", "p-0-shared-1-f2"],
    ),
    (
        "other member: group filter for b skipped, for c taken",
        ("c", "shared", 0),
        ["p-all-e1", "p-0-e2", "p-0-e5", "p-0-shared-all-f1", "p-0-shared-0-f2"],
    ),
]


@pytest.mark.parametrize(("where", "expected"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filters_at_podcliqueset_and_scaling_group_level(where: tuple[str, str | None, int], expected: list[str]) -> None:
    clique, group, group_replica = where
    pod = grove_pod(FILTERED, 0, clique, 0, group, group_replica)
    after = patched_pod(pod, mutate(pod_review(pod), store_of(read_podcliqueset(FILTERED))))
    assert_claims(after, expected)


UNFILTERED = {
    "apiVersion": "grove.io/v1alpha1",
    "kind": "PodCliqueSet",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {
        "replicas": 1,
        "template": {
            "cliques": [
                {
                    "name": "a",
                    "resourceSharing": [{"name": "c0", "scope": "AllReplicas", "filter": {"childCliqueNames": ["z"]}}],
                    "spec": {"replicas": 1, "podSpec": {"containers": [{"name": "a"}]}},
                },
                {"name": "b", "spec": {"replicas": 1, "podSpec": {"containers": [{"name": "b"}]}}},
            ],
            "podCliqueScalingGroups": [
                {
                    "name": "g",
                    "cliqueNames": ["b"],
                    "resourceSharing": [
                        {"name": "g0", "scope": "AllReplicas", "filter": {"childCliqueNames": ["g"]}},
                        {"name": "g1", "scope": "AllReplicas", "filter": {"childScalingGroupNames": ["g"]}},
                        {"name": "g2", "scope": "AllReplicas", "filter": {"childCliqueNames": ["b"]}},
                    ],
                }
            ],
        },
    },
}
UNFILTERED_CASES = [
    ("a clique's entries have no filter, whatever their JSON says", ("a", None), ["p-0-a-all-c0"]),
    ("a scaling-group filter names cliques only, never the group", ("b", "g"), ["p-0-g-all-g2"]),
]


@pytest.mark.parametrize(("where", "expected"), [c[1:] for c in UNFILTERED_CASES], ids=[c[0] for c in UNFILTERED_CASES])
def test_filters_apply_where_grove_has_them(where: tuple[str, str | None], expected: list[str]) -> None:
    clique, group = where
    pod = grove_pod(UNFILTERED, 0, clique, 0, group, 0)
    after = patched_pod(pod, mutate(pod_review(pod), store_of(read_podcliqueset(UNFILTERED))))
    assert_claims(after, expected)


def test_podcliqueset_with_nothing_to_share_is_allowed_without_patch() -> None:
    raw = copy.deepcopy(FILTERED)
    raw["spec"]["template"]["resourceSharing"] = []
    raw["spec"]["template"]["podCliqueScalingGroups"][0]["resourceSharing"] = None
    pod = grove_pod(raw, 0, "b", 0, "shared", 0)
    decision = mutate(pod_review(pod), store_of(read_podcliqueset(raw)))
    assert response(decision) == {"uid": "7f0b2c4e-0001", "allowed": True, "status": {"code": 200}}
    assert decision.outcome == "allowed"


# --- label errors (§5.1) ---------------------------------------------------------------------------


RAW = workload_pcs_raw()
A = grove_pod(RAW, 0, "worker-a", 0)
B = grove_pod(RAW, 0, "worker-b", 0, "sga", 1)
PCLQ = "grove.io/podclique"
PCS_INDEX = "grove.io/podcliqueset-replica-index"
PCSG = "grove.io/podcliquescalinggroup"
PCSG_INDEX = "grove.io/podcliquescalinggroup-replica-index"
POD_INDEX = "grove.io/podclique-pod-index"


def labelled(pod: dict[str, Any], changes: dict[str, str | None]) -> dict[str, Any]:
    pod = copy.deepcopy(pod)
    for label, value in changes.items():
        if value is None:
            pod["metadata"]["labels"].pop(label)
        else:
            pod["metadata"]["labels"][label] = value
    return pod


FORMAT = "PodClique FQN is not in the expected format of <pcs-name>-<pcs-replica-index>-<pclq-template-name>"
LABEL_ERRORS = [
    (
        "replica index in the clique name is not a number",
        labelled(A, {PCLQ: "rs-test-x-worker-a"}),
        'error extracting PCS replica index for PodClique default/rs-test-x-worker-a: strconv.Atoi: parsing "x": invalid syntax',
    ),
    (
        "clique name does not start with the PodCliqueSet's",
        labelled(A, {PCLQ: "worker"}),
        f"error extracting PCS replica index for PodClique default/worker: {FORMAT}: worker",
    ),
    (
        "standalone: replica-index label missing",
        labelled(A, {PCS_INDEX: None}),
        f"failed to get PodClique name: missing label {PCS_INDEX} on PodClique: default/rs-test-0-worker-a",
    ),
    (
        "standalone: replica-index label not a number",
        labelled(A, {PCS_INDEX: "zero"}),
        f'failed to get PodClique name: invalid label {PCS_INDEX} on PodClique: default/rs-test-0-worker-a: '
        'strconv.Atoi: parsing "zero": invalid syntax',
    ),
    (
        "standalone: replica-index label out of range",
        labelled(A, {PCS_INDEX: "99999999999999999999"}),
        f'failed to get PodClique name: invalid label {PCS_INDEX} on PodClique: default/rs-test-0-worker-a: '
        'strconv.Atoi: parsing "99999999999999999999": value out of range',
    ),
    (
        "standalone: replica-index label disagrees with the clique name",
        labelled(A, {PCS_INDEX: "1"}),
        'failed to get PodClique name: FQN "rs-test-0-worker-a" does not have expected prefix "rs-test-1-"',
    ),
    (
        "member: scaling-group replica-index label missing",
        labelled(B, {PCSG_INDEX: None}),
        f"failed to get PodClique name: missing label {PCSG_INDEX} on PodClique: default/rs-test-0-sga-1-worker-b",
    ),
    (
        "member: scaling-group replica-index label not a number",
        labelled(B, {PCSG_INDEX: "one"}),
        f'failed to get PodClique name: invalid label {PCSG_INDEX} on PodClique: default/rs-test-0-sga-1-worker-b: '
        'strconv.Atoi: parsing "one": invalid syntax',
    ),
    (
        "member: scaling-group label disagrees with the clique name",
        labelled(B, {PCSG: "rs-test-0-sgb"}),
        'failed to get PodClique name: FQN "rs-test-0-sga-1-worker-b" does not have expected prefix "rs-test-0-sgb-1-"',
    ),
    (
        "clique template not in the PodCliqueSet",
        labelled(A, {PCLQ: "rs-test-0-worker-z"}),
        'PodClique template "worker-z" not found in PCS spec',
    ),
    (
        "scaling group not in the PodCliqueSet",
        labelled(B, {PCSG: "rs-test-0-sgz", PCLQ: "rs-test-0-sgz-1-worker-b"}),
        'PCSG label "rs-test-0-sgz" present on PodClique "rs-test-0-sgz-1-worker-b" but no matching '
        'PodCliqueScalingGroupConfig found in PCS "rs-test"',
    ),
    (
        "pod index missing where a clique PerReplica claim needs it",
        labelled(A, {POD_INDEX: None}),
        f"missing label {POD_INDEX} on Pod: default/rs-test-0-worker-a-",
    ),
    (
        "pod index not a number",
        labelled(A, {POD_INDEX: "-"}),
        f'invalid label {POD_INDEX} on Pod: default/rs-test-0-worker-a-: strconv.Atoi: parsing "-": invalid syntax',
    ),
    (
        "pod index negative: no claim could ever exist for it",
        labelled(A, {POD_INDEX: "-1"}),
        f"invalid label {POD_INDEX} on Pod: default/rs-test-0-worker-a-: must be greater than or equal to 0",
    ),
]


@pytest.mark.parametrize(("pod", "message"), [c[1:] for c in LABEL_ERRORS], ids=[c[0] for c in LABEL_ERRORS])
def test_label_errors_are_denied_with_groves_text(pod: dict[str, Any], message: str) -> None:
    decision = mutate(pod_review(pod), store_of(workload_pcs()))
    assert response(decision) == {
        "uid": "7f0b2c4e-0001",
        "allowed": False,
        "status": {"code": 403, "reason": "Forbidden", "message": message},
    }
    assert decision.outcome == "denied"


def test_label_errors_come_before_the_podcliqueset_lookup() -> None:
    decision = mutate(pod_review(labelled(A, {PCS_INDEX: None})), {})
    assert response(decision)["status"]["message"].startswith("failed to get PodClique name: missing label")


def test_pod_index_is_not_needed_without_clique_per_replica_sharing() -> None:
    pod = labelled(B, {POD_INDEX: None})
    assert_claims(patched_pod(pod, mutate(pod_review(pod), store_of(workload_pcs()))), worker_b(0, 1))


# --- unknown PodCliqueSet --------------------------------------------------------------------------

MISSING = "PodCliqueSet default/rs-test (label app.kubernetes.io/part-of of the pod) not found: "


def test_unknown_podcliqueset_is_denied_by_default() -> None:
    decision = mutate(pod_review(A), {})
    assert response(decision) == {
        "uid": "7f0b2c4e-0001",
        "allowed": False,
        "status": {"code": 403, "reason": "Forbidden", "message": MISSING + "the pod's shared ResourceClaims cannot be determined"},
    }


def test_unknown_podcliqueset_is_allowed_unchanged_with_a_warning_when_asked() -> None:
    decision = mutate(pod_review(A), {}, on_missing_pcs="allow")
    assert response(decision) == {
        "uid": "7f0b2c4e-0001",
        "allowed": True,
        "status": {"code": 200},
        "warnings": [MISSING + "pod admitted without shared ResourceClaims"],
    }


def test_podcliqueset_is_looked_up_in_the_pods_namespace() -> None:
    pod = copy.deepcopy(A)
    pod["metadata"]["namespace"] = "team-b"
    review = pod_review(pod)
    review["request"]["namespace"] = ""
    decision = mutate(review, store_of(workload_pcs()))
    assert response(decision)["status"]["message"].startswith("PodCliqueSet team-b/rs-test ")


def test_a_pod_with_no_namespace_anywhere_is_in_default() -> None:
    """As ``kubectl`` and the embedded store treat a manifest that names no namespace."""
    pod = copy.deepcopy(A)
    del pod["metadata"]["namespace"]
    review = pod_review(pod)
    review["request"].pop("namespace", None)
    source = Source(store_of(workload_pcs()).values())
    assert_claims(patched_pod(pod, mutate(review, source)), worker_a(0, 0))
    assert source.lookups == [("default", "rs-test")]
    missing = mutate(review, {})
    assert response(missing)["status"]["message"].startswith("PodCliqueSet default/rs-test ")


def test_request_namespace_wins_over_the_pods() -> None:
    pod = copy.deepcopy(A)
    pod["metadata"]["namespace"] = "ignored"
    review = pod_review(pod)
    review["request"]["namespace"] = "default"
    source = Source(store_of(workload_pcs()).values())
    assert_claims(patched_pod(pod, mutate(review, source)), worker_a(0, 0))
    assert source.lookups == [("default", "rs-test")]


# --- pods and operations left alone -----------------------------------------------------------------

NOT_GROVE = [
    ("no labels", {"metadata": {"generateName": "web-", "namespace": "default"}}),
    ("null labels", {"metadata": {"labels": None}}),
    ("only grove.io/podclique", {"metadata": {"labels": {PCLQ: "rs-test-0-worker-a"}}}),
    ("only part-of", {"metadata": {"labels": {"app.kubernetes.io/part-of": "rs-test"}}}),
    ("spec never read", {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": "not a list"}}),
]


@pytest.mark.parametrize("pod", [c[1] for c in NOT_GROVE], ids=[c[0] for c in NOT_GROVE])
def test_non_grove_pods_are_allowed_untouched_after_reading_labels_only(pod: dict[str, Any]) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", **pod}
    source = Source(store_of(workload_pcs()).values())
    decision = mutate(pod_review(pod), source)
    assert source.lookups == []
    assert response(decision) == {"uid": "7f0b2c4e-0001", "allowed": True, "status": {"code": 200}}


@pytest.mark.parametrize("operation", ["UPDATE", "DELETE", "CONNECT", "PATCH"])
def test_only_create_is_mutated(operation: str) -> None:
    source = Source(store_of(workload_pcs()).values())
    decision = mutate(pod_review(A, operation), source)
    assert source.lookups == []
    assert response(decision) == {"uid": "7f0b2c4e-0001", "allowed": True, "status": {"code": 200}}
    assert decision.operation == operation


def test_grove_pod_create_is_read_whole() -> None:
    """Unlike any other pod's, its spec is read: one Go could not decode is refused."""
    pod = copy.deepcopy(A)
    pod["spec"]["containers"] = "not a list"
    answer = response(mutate(pod_review(pod), store_of(workload_pcs())))
    assert answer["status"]["code"] == 400
    assert answer["status"]["message"].startswith("cannot decode request.object as v1, Kind=Pod: spec.containers: ")


def test_dry_run_is_mutated_like_any_other() -> None:
    review = pod_review(A)
    review["request"]["dryRun"] = True
    after = patched_pod(A, mutate(review, store_of(workload_pcs())))
    assert_claims(after, worker_a(0, 0))


def test_v1beta1_is_answered_in_v1beta1() -> None:
    review = pod_review(A)
    review["apiVersion"] = "admission.k8s.io/v1beta1"
    decision = mutate(review, store_of(workload_pcs()))
    assert decision.body["apiVersion"] == "admission.k8s.io/v1beta1"
    assert decision.outcome == "patched"
    assert decision.operation == "CREATE"


# --- malformed input --------------------------------------------------------------------------------


def with_request(**changes: Any) -> dict[str, Any]:
    review = pod_review(A)
    review["request"].update(changes)
    return review


def bad_containers() -> dict[str, Any]:
    pod = copy.deepcopy(A)
    pod["spec"]["containers"] = {"name": "worker-a"}
    return with_request(object=pod)


def numeric_label() -> dict[str, Any]:
    pod = copy.deepcopy(A)
    pod["metadata"]["labels"]["kai.scheduler/queue"] = 7
    return with_request(object=pod)


MALFORMED_BODIES = [
    ("empty body", b"", "request body is empty: expected an AdmissionReview"),
    ("not JSON", b"{", None),
    ("not an object", b"[]", "request body must be a JSON object (an AdmissionReview)"),
    ("no request", b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}', "AdmissionReview has no request"),
    ("no uid", orjson.dumps(with_request(uid="")), "AdmissionReview request has no uid"),
]


@pytest.mark.parametrize(("body", "error"), [c[1:] for c in MALFORMED_BODIES], ids=[c[0] for c in MALFORMED_BODIES])
def test_unusable_bodies_get_http_400(body: bytes, error: str | None) -> None:
    decision = mutate(body, {})
    assert decision.status == 400
    assert set(decision.body) == {"error"}
    if error is not None:
        assert decision.body["error"] == error
    else:
        assert decision.body["error"].startswith("request body is not valid JSON: ")


MALFORMED_OBJECTS = [
    (
        "a PodCliqueSet sent to the pod webhook",
        with_request(kind={"group": "grove.io", "version": "v1alpha1", "kind": "PodCliqueSet"}, object=workload_pcs_raw()),
        "unable to decode grove.io/v1alpha1, Kind=PodCliqueSet into v1, Kind=Pod",
    ),
    (
        "containers not a list",
        bad_containers(),
        "cannot decode request.object as v1, Kind=Pod: spec.containers: Input should be a valid list",
    ),
    (
        "a label that is not a string",
        numeric_label(),
        "cannot decode request.object as v1, Kind=Pod: metadata.labels.kai.scheduler/queue: Input should be a valid string",
    ),
    ("CREATE without an object", with_request(object=None), "there is no content to decode: request.object is missing"),
    (
        "a ConfigMap with Grove's labels under the Pod kind (was patched)",
        with_request(object={"apiVersion": "v1", "kind": "ConfigMap", "metadata": A["metadata"], "data": {"a": "b"}}),
        "unable to decode v1, Kind=ConfigMap into v1, Kind=Pod",
    ),
    (
        "a Pod of another version",
        with_request(object={**A, "apiVersion": "v2"}),
        "unable to decode v2, Kind=Pod into v1, Kind=Pod",
    ),
]


@pytest.mark.parametrize(("review", "message"), [c[1:] for c in MALFORMED_OBJECTS], ids=[c[0] for c in MALFORMED_OBJECTS])
def test_unreadable_objects_are_answered_with_code_400(review: dict[str, Any], message: str) -> None:
    decision = mutate(review, store_of(workload_pcs()))
    assert response(decision) == {"uid": "7f0b2c4e-0001", "allowed": False, "status": {"code": 400, "message": message}}
    assert decision.outcome == "error"
