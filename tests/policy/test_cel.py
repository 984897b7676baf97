"""The CEL the policy is written in: texts that read as the webhook's field errors."""

from __future__ import annotations

import pytest

from webhook.core.gocompat.fielderrors import ErrorType, Path, forbidden, required
from webhook.policy import cel
from webhook.policy.cel import Text


def test_a_field_error_of_fixed_parts_is_one_literal_reading_as_the_webhooks() -> None:
    path = Path("spec").child("template", "resourceSharing").index(0).child("name")
    assert str(cel.error(Text.of(str(path)), ErrorType.REQUIRED, "reference name is required")) == (
        f"'{required(path, 'reference name is required')}'"
    )
    assert str(cel.error(Text.of("spec.template.cliques"), ErrorType.FORBIDDEN, "no")) == f"'{forbidden(Path('spec.template.cliques'), 'no')}'"


def test_an_index_and_a_value_are_evaluated_between_the_fixed_parts() -> None:
    text = cel.error(Text.of("spec.template.cliques").index("i").child("name"), ErrorType.DUPLICATE, value=cel.quote("e.name"))
    assert str(text) == "'spec.template.cliques[' + string(i) + '].name: Duplicate value: ' + strings.quote(string(e.name))"


@pytest.mark.parametrize(("text", "literal"), [("it's", r"'it\'s'"), ("a\\b", r"'a\\b'")])
def test_literals_escape_quotes_and_backslashes(text: str, literal: str) -> None:
    assert cel.lit(text) == literal


def test_nested_lists_are_counted_and_joined_level_by_level() -> None:
    assert cel.counted("x", 2) == "x.map(n2, size(n2)).sum()"
    assert cel.joined("x", 2) == "x.map(j2, j2.join(', ')).filter(j2, j2 != '').join(', ')"
