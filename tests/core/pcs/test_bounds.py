"""Every review bounded (DECISIONS.md §3): an object made to hold the webhook up is answered with a
bounded message, without the checks that would grow with it, and never sends the API server more
than a few questions. The shapes are those of issue 38, scaled down to keep the suite quick;
bench/hostile_shapes.py sends them at the API server's 3 MiB limit."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from core.pcs.test_authorization import Access, decide
from core.podcliquesets import Object, create, denial, pcs_review, small, update
from webhook.core.admission import answer
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.pcs.authorization import MAX_TEMPLATES
from webhook.core.pcs.validator import MAX_ERRORS, MORE_ERRORS, PodCliqueSetValidator
from webhook.core.pcs.warnings import MAX_FAMILIES, NOT_CHECKED
from webhook.core.sharing.owners import planned_owners


def with_filter(names: list[str]) -> Object:
    pcs = small()
    pcs["spec"]["template"]["resourceSharing"][0]["filter"] = {"childCliqueNames": names}
    return pcs


def test_a_filter_naming_many_unknown_cliques_lists_the_first_hundred_errors_and_says_so() -> None:
    message = denial(create(with_filter([f"nope-{n}" for n in range(20_000)])))
    errors = message[1:-1].split(", ")
    assert len(errors) == MAX_ERRORS + 1
    assert errors[0] == 'spec.template.resourceSharing[0].filter.childCliqueNames[0]: Not found: "nope-0"'
    assert message.endswith(f"{MORE_ERRORS}]")


def test_an_object_with_a_hundred_errors_or_fewer_lists_them_all() -> None:
    message = denial(create(with_filter([f"nope-{n}" for n in range(MAX_ERRORS)])))
    assert MORE_ERRORS not in message and message.count("Not found") == MAX_ERRORS


def test_an_update_too_is_cut_at_a_hundred_errors() -> None:
    old = small()
    new = small()
    new["spec"]["template"]["cliques"] = [{"name": f"c{n}", "spec": {"replicas": 1}} for n in range(2 * MAX_ERRORS)]
    message = denial(update(new, old))
    assert message.count("new clique name") == MAX_ERRORS - 1 and message.endswith(f"{MORE_ERRORS}]")


def many_families(groups: int, members: int) -> Object:
    """Scaling groups that each list every one of ``members`` cliques, each clique sharing one
    template: groups times members PodCliques, each a family of claim names."""
    pcs = small()
    template = pcs["spec"]["template"]
    template["cliques"] = [{"name": f"c{n}", "spec": {"replicas": 1}, "resourceSharing": [{"name": "gpu", "scope": "PerReplica"}]} for n in range(members)]
    template["podCliqueScalingGroups"] = [{"name": f"g{n}", "cliqueNames": [f"c{m}" for m in range(members)]} for n in range(groups)]
    return pcs


def test_a_spec_of_too_many_claim_name_families_is_admitted_with_its_names_unchecked() -> None:
    response = create(many_families(120, 100))
    assert response["allowed"] is True
    assert response["warnings"] == [NOT_CHECKED]
    assert f"more than {MAX_FAMILIES} families" in NOT_CHECKED


def test_below_the_families_bound_the_names_are_checked() -> None:
    response = create(many_families(90, 100))
    assert response["allowed"] is True and "warnings" not in response


def test_a_clique_listed_twice_in_a_scaling_group_is_one_podclique() -> None:
    pcs = small()
    pcs["spec"]["template"]["podCliqueScalingGroups"][0]["cliqueNames"] = ["b", "b", "b"]
    owners = [o.name for o in planned_owners(read_podcliqueset(pcs))]
    assert owners == ["p", "p-0-a", "p-0-g", "p-0-g-0-b"]


def foreign(count: int) -> Object:
    pcs = small()
    pcs["spec"]["template"]["resourceSharing"] += [
        {"name": f"t{n}", "namespace": f"team-{n}", "scope": "AllReplicas"} for n in range(count)
    ]
    return pcs


def test_more_templates_of_other_namespaces_than_the_webhook_checks_are_refused_without_asking() -> None:
    access = Access()
    response = decide(pcs_review(foreign(MAX_TEMPLATES + 1)), access)
    assert access.asked == []
    assert response["status"]["message"] == (
        f"spec.template: Forbidden: names {MAX_TEMPLATES + 1} ResourceClaimTemplates of other namespaces; "
        f"the webhook checks at most {MAX_TEMPLATES}"
    )


def test_as_many_as_the_webhook_checks_are_asked_about() -> None:
    access = Access()
    assert decide(pcs_review(foreign(MAX_TEMPLATES)), access)["allowed"] is True
    assert len(access.asked) == MAX_TEMPLATES


def test_under_warn_too_many_templates_of_other_namespaces_are_a_warning() -> None:
    access = Access()
    response = decide(pcs_review(foreign(MAX_TEMPLATES + 1)), access, warn=True)
    assert response["allowed"] is True and access.asked == []
    assert response["warnings"][-1].startswith(f"spec.template: names {MAX_TEMPLATES + 1} ResourceClaimTemplates")


class Lookup:
    def __init__(self) -> None:
        self.looked: list[tuple[str, str]] = []

    async def exists(self, namespace: str, name: str) -> bool | None:
        self.looked.append((namespace, name))
        return False


def test_missing_templates_are_looked_up_for_the_first_sixteen_only() -> None:
    pcs = small()
    pcs["spec"]["template"]["resourceSharing"] += [{"name": f"t{n}", "scope": "AllReplicas"} for n in range(100)]
    lookup = Lookup()
    validator = PodCliqueSetValidator(lookup=lookup)
    answered: Any = asyncio.run(answer(validator, "validate-podcliqueset", orjson.dumps(pcs_review(pcs)))).body["response"]
    assert len(lookup.looked) == MAX_TEMPLATES
    assert len(answered["warnings"]) == MAX_TEMPLATES
