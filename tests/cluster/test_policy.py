"""The ValidatingAdmissionPolicy on the real API server, installed by the chart beside the validating
webhook (``release.VALIDATION``): in the namespace labelled for it the policy alone decides. It is
what ``python -m webhook policy`` prints, the API server type-checks it against Grove's CRD without
a warning, and it decides every example and hundreds of random PodCliqueSets, CREATEs and UPDATEs,
as ``webhook review`` decides them, its denials naming a field path the webhook's name too."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from fuzz.strategies import dumps
from kubernetes import client

from cluster import kube, policycases
from cluster.conftest import TIER
from cluster.decisions import Case, Decider, Outcome, Refused
from cluster.release import DECIDED_BY, Release
from core.answers import validated
from core.podcliquesets import workload
from webhook.policy.command import documents
from webhook.policy import PolicySettings

POLICY_NAMESPACE = "decided-by-policy"
UNCHECKED_NAMESPACE = "decided-by-nobody"
BUDGET = ("cost limit exceeded", "running out of cost budget")
"""How the API server says a check stopped at its CEL cost budget."""
LONGEST_LIST, OVER_BUDGET = 500, 600
"""Entries of one list (templates, or a level's sharing) the policy checks within its budget, and
entries of one list it cannot (docs/policy.md: measured 562 on 1.34.4 and 1.37.2). An object the
policy cannot check is denied (failurePolicy Fail)."""
COUNTS = {"created": 480, "updated": 370, "devices": 60, "random": 100}
"""Random cases of each kind: about 70% pass Grove's CRD schema and are compared."""
TYPE_CHECK_DEADLINE = 120.0
"""Seconds the controller manager may take to type-check a new policy (some 20 to 40 s from its start)."""
LARGEST_SENT = 64 * 1024
"""Bytes of JSON of the random objects sent. A larger one is a list the generator repeated 1,000 or
3,000 times: longer than the lists the policy checks within its budget (which the budget test
brackets), and seconds of the API server's time each."""


@pytest.fixture(scope="module")
def decider(release: Release, admin: client.ApiClient) -> Iterator[Decider]:
    """The two namespaces, each holding the update examples' old objects, once the API server
    enforces the policy in the first (it learns of policies and labels through its watches).
    Deleted afterwards, so the reconciler stops retrying their external templates."""
    core = client.CoreV1Api(admin)
    for namespace, by in ((POLICY_NAMESPACE, "policy"), (UNCHECKED_NAMESPACE, "nobody")):
        core.create_namespace({"metadata": {"name": namespace, "labels": {DECIDED_BY: by}}})
    decider = Decider(admin, UNCHECKED_NAMESPACE, POLICY_NAMESPACE)
    denied = Case("pcs-create-f2-filter-clique-not-found.json", policycases.request("pcs-create-f2-filter-clique-not-found.json"))
    kube.wait_for(lambda: decider.decide([denied])[0].policy, "the policy to deny in its namespace")
    for example in policycases.UPDATES:
        old = policycases.request(example, "oldObject")
        old["metadata"]["name"] = old_name(example)
        decider.store_old(old)
    yield decider
    for namespace in (POLICY_NAMESPACE, UNCHECKED_NAMESPACE):
        core.delete_namespace(namespace)


def old_name(example: str) -> str:
    return f"old-{policycases.UPDATES.index(example)}"


def refused_by_the_schema(example: str) -> bool:
    """Grove's CRD refuses the example's object (an unknown scope) before any policy or webhook."""
    return example in ("pcs-create-r4-scope-not-supported.json", "pcs-create-several-errors.json")


@pytest.mark.parametrize("example", [*policycases.CREATES, *policycases.UPDATES])
def test_each_example_is_decided_by_the_policy_as_review_decides_it(decider: Decider, example: str) -> None:
    old = old_name(example) if example in policycases.UPDATES else None
    outcome = decider.decide([Case(example, policycases.request(example), old)])[0]
    if refused_by_the_schema(example):
        assert outcome.webhook is None and not validated(policycases.EXAMPLES[example]).body["response"]["allowed"]
        return
    assert outcome.disagreement(decider.olds.get(old or "")) is None
    if outcome.policy is not None and example != "pcs-update-u1-templates-immutable.json":
        # The webhook's words (U1 omits the templates' value: docs/policy.md).
        assert outcome.policy.partition(" denied request: ")[2] == outcome.webhook["status"]["message"]


def longest_list(held: bytes) -> int:
    """The most entries of one list the policy compares: templates, or one level's sharing."""
    template = json.loads(held)["spec"]["template"]
    owners = [template, *template.get("cliques", []), *template.get("podCliqueScalingGroups", [])]
    lengths = [len(template.get("resourceClaimTemplates") or [])] + [len(o.get("resourceSharing") or []) for o in owners]
    return max(lengths)


def over_budget(outcome: Outcome) -> bool:
    return outcome.policy is not None and any(words in outcome.policy for words in BUDGET)


def judged(decider: Decider, outcomes: list[Outcome]) -> tuple[list[Outcome], list[Outcome], list[str]]:
    """The objects both decided, those the policy could not check within its budget, and every
    decision apart (each with its objects). Running out of the budget is a decision apart unless a
    list is longer than the documented ones."""
    compared = [o for o in outcomes if o.webhook is not None]
    beyond = [o for o in compared if over_budget(o) and longest_list(o.held or b"{}") > LONGEST_LIST]
    wrong = []
    for outcome in compared:
        problem = None if outcome in beyond else outcome.disagreement(decider.olds.get(outcome.case.old or ""))
        if problem is not None:
            wrong.append(problem)
    return compared, beyond, wrong


def test_random_podcliquesets_get_the_webhooks_decisions_from_the_policy(decider: Decider) -> None:
    olds = {example: old_name(example) for example in policycases.UPDATES}
    outcomes = decider.decide([c for c in policycases.cases(olds, COUNTS) if len(dumps(c.obj)) <= LARGEST_SENT])
    compared, beyond, wrong = judged(decider, outcomes)
    assert not wrong, f"{len(wrong)} of {len(compared)} decided apart:\n\n" + "\n\n".join(w[:4000] for w in wrong[:5])
    assert {(o.case.operation, o.policy is None) for o in compared} == {
        ("CREATE", True), ("CREATE", False), ("UPDATE", True), ("UPDATE", False)}
    assert len(compared) - len(beyond) >= 600, f"only {len(compared) - len(beyond)} objects compared"
    assert all(o.webhook and not o.webhook["allowed"] for o in beyond), "the webhook admits what the policy could not check"
    TIER["policy"] = (
        f"the ValidatingAdmissionPolicy decided {len(compared) - len(beyond)} random PodCliqueSets as the webhook "
        f"({sum(o.case.old is not None for o in compared)} UPDATEs); {len(beyond)} more ran out of its budget, denied by both"
    )


def shaped(shape: str, n: int) -> dict[str, Any]:
    """The workload with ``n`` PodCliqueSet entries, or ``n`` templates, all distinct and valid."""
    pcs = workload()
    pcs["metadata"]["name"] = f"{shape}-{n}"
    template = pcs["spec"]["template"]
    if shape == "entries":
        template["resourceSharing"] = [{"name": f"tpl-{i}", "scope": "AllReplicas"} for i in range(n)]
    else:
        first = template["resourceClaimTemplates"][0]
        template["resourceClaimTemplates"] = [{**copy.deepcopy(first), "name": f"tpl-{i}"} for i in range(n)]
    return pcs


@pytest.mark.parametrize("shape", ["entries", "templates"])
def test_a_list_of_the_documented_length_is_checked_and_a_longer_one_runs_out_of_budget(decider: Decider, shape: str) -> None:
    """docs/policy.md's figures, bracketing the largest list this API server checks."""
    decider.check(shaped(shape, LONGEST_LIST))
    with pytest.raises(Refused) as refused:
        decider.check(shaped(shape, OVER_BUDGET))
    assert any(words in refused.value.message for words in BUDGET), refused.value.message


def test_the_chart_installs_what_the_command_prints_and_the_api_server_type_checks_it(
    release: Release, admin: client.ApiClient
) -> None:
    """Last in the module: the controller manager type-checks a new policy some 20 to 40 s after
    it learnt of it, by which time the tests above have run."""
    printed = next(yaml.safe_load_all(documents(PolicySettings(name=release.name))))
    registration = client.AdmissionregistrationV1Api(admin)

    def checked() -> Any:
        stored = admin.sanitize_for_serialization(registration.read_validating_admission_policy(release.name))
        status = stored.get("status") or {}
        return stored if status.get("observedGeneration") == stored["metadata"]["generation"] else None

    stored = kube.wait_for(checked, "the policy's type check", deadline=TYPE_CHECK_DEADLINE)
    for member in ("failurePolicy", "variables", "validations"):
        assert stored["spec"][member] == printed["spec"][member], member
    assert stored["status"]["typeChecking"].get("expressionWarnings", []) == []
