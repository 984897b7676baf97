"""A warning at CREATE for each external template that does not exist (DECISIONS.md §3.4): a typo
shows at ``kubectl apply``; never a denial; templates of other namespaces only when the user may
read them."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from core.podcliquesets import Object, cross_namespace, pcs_review, small
from webhook.core.admission import answer
from webhook.core.pcs.authorization import TemplateAuthorization, User
from webhook.core.pcs.validator import PodCliqueSetValidator

NOT_CREATED = "its claims are not created, and the pods that need them stay Pending, until it exists"


class Templates:
    """The templates that exist; records every lookup. ``None`` for a template that cannot be read."""

    def __init__(self, existing: dict[tuple[str, str], bool | None]) -> None:
        self.existing = existing
        self.looked_up: list[tuple[str, str]] = []

    async def exists(self, namespace: str, name: str) -> bool | None:
        self.looked_up.append((namespace, name))
        return self.existing.get((namespace, name), False)


class Allowing:
    """Template authorization that lets the user read ``team-b``'s templates and remembers it."""

    def known(self, user: User, namespace: str, name: str) -> bool | None:
        return namespace == "team-b"

    async def may_get(self, user: User, namespace: str, name: str) -> bool:
        return namespace == "team-b"


def decide(pcs: Object, templates: Templates, *, strict: bool = False, authorization: bool = False, operation: str = "CREATE") -> dict[str, Any]:
    access = TemplateAuthorization(Allowing(), warn=True) if authorization else None
    validator = PodCliqueSetValidator(strict=strict, templates=access, lookup=templates)
    review = pcs_review(pcs, operation=operation, old=pcs if operation == "UPDATE" else None)
    review["request"]["userInfo"] = {"username": "alice"}
    decided = asyncio.run(answer(validator, "validate-podcliqueset", orjson.dumps(review)))
    result: dict[str, Any] = decided.body["response"]
    return result


def with_typo() -> Object:
    pcs = small()
    pcs["spec"]["template"]["cliques"][0]["resourceSharing"].append({"name": "gpu-tempalte", "scope": "AllReplicas"})
    return pcs


def test_a_typo_in_a_template_name_warns_at_create() -> None:
    found = decide(with_typo(), Templates({}))
    assert found["allowed"] is True
    assert found["warnings"] == [
        f'spec.template.cliques[0].resourceSharing[1]: ResourceClaimTemplate "default/gpu-tempalte" not found; {NOT_CREATED}'
    ]


def test_never_a_denial_even_under_strict() -> None:
    assert decide(with_typo(), Templates({}), strict=True)["allowed"] is True


@pytest.mark.parametrize(
    ("existing", "operation"),
    [
        pytest.param({("default", "gpu-tempalte"): True}, "CREATE", id="the template exists"),
        pytest.param({("default", "gpu-tempalte"): None}, "CREATE", id="the lookup has no answer"),
        pytest.param({}, "UPDATE", id="UPDATE: references are immutable, checked at CREATE"),
    ],
)
def test_no_warning(existing: dict[tuple[str, str], bool | None], operation: str) -> None:
    assert "warnings" not in decide(with_typo(), Templates(existing), operation=operation)


def test_internal_templates_are_not_looked_up() -> None:
    templates = Templates({})
    assert "warnings" not in decide(small(), templates)
    assert templates.looked_up == []


def test_templates_of_other_namespaces_only_when_the_user_may_read_them() -> None:
    """alice may read team-b's templates (none exist) but not team-c's: team-c's is never looked
    up, so the warning cannot tell her whether it exists."""
    templates = Templates({("default", "own"): True})
    found = decide(cross_namespace(), templates, authorization=True)
    assert sorted(templates.looked_up) == [("default", "own"), ("team-b", "ext"), ("team-b", "ext2")]
    assert [w for w in found["warnings"] if "not found" in w] == [
        f'spec.template.resourceSharing[1]: ResourceClaimTemplate "team-b/ext" not found; {NOT_CREATED}',
        f'spec.template.cliques[0].resourceSharing[2]: ResourceClaimTemplate "team-b/ext2" not found; {NOT_CREATED}',
    ]


def test_without_template_authorization_other_namespaces_are_not_looked_up() -> None:
    templates = Templates({("default", "own"): True})
    assert "warnings" not in decide(cross_namespace(), templates)
    assert templates.looked_up == [("default", "own")]
