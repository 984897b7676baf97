"""The policy as the API server receives it: its variables read before use, its checks in the
webhook's order, its words the webhook's (what the API server does with it is tests/cluster's)."""

from __future__ import annotations

import re

import pytest

from webhook.core.pcs import rules as groves_rules
from webhook.core.pcs.authorization import TEMPLATE_REFUSED
from webhook.policy import cel
from webhook.policy.command import policy
from webhook.policy.rules import SLOTS

SPEC = policy("grove-sharing-webhook", "Fail")["spec"]
READ = re.compile(r"variables\.([A-Za-z]\w*)")


def expressions() -> list[str]:
    return [v["expression"] for v in SPEC["variables"]] + [
        text for v in SPEC["validations"] for text in (v["expression"], v.get("messageExpression", ""))
    ]


def test_each_variable_reads_only_those_declared_before_it_and_each_is_read() -> None:
    declared: list[str] = []
    for variable in SPEC["variables"]:
        unknown = set(READ.findall(variable["expression"])) - set(declared)
        assert not unknown, f"{variable['name']} reads {unknown} before they are declared"
        declared.append(variable["name"])
    assert len(set(declared)) == len(declared)
    read = {name for text in expressions() for name in READ.findall(text)}
    assert set(declared) - read == set()


def test_the_checks_come_in_the_webhooks_order() -> None:
    decoding, rules, update = (v["expression"] for v in SPEC["validations"][:3])
    assert decoding.startswith("[[(has(object.spec)") and "cannot decode request.oldObject" in decoding
    assert rules == "variables.createErrorCount == 0"
    assert update.startswith("!(request.operation == 'UPDATE' && variables.createErrorCount == 0) ||")
    slots = SPEC["validations"][3:]
    assert len(slots) == SLOTS + 1
    assert all("authorizer." in slot["expression"] for slot in slots[:-1])


TEXTS = {name: text for name, text in vars(groves_rules).items() if name.isupper() and isinstance(text, str)}


@pytest.mark.parametrize("text", [*TEXTS.values(), TEMPLATE_REFUSED], ids=[*TEXTS, "TEMPLATE_REFUSED"])
def test_every_text_of_groves_rules_is_the_one_the_webhook_reports(text: str) -> None:
    parts = [cel.lit(part)[1:-1] for part in text.split("{}") if part]
    assert parts and all(any(part in e for e in expressions()) for part in parts), text


def test_every_denial_has_a_reason_and_a_message_of_its_own() -> None:
    for validation in SPEC["validations"]:
        assert validation["reason"] in ("Forbidden", "Invalid")
        assert validation["message"] and validation["messageExpression"]
