"""Quantities: compared by value (Semantic.DeepEqual) and printed as apimachinery prints them."""

from __future__ import annotations

from decimal import Decimal

import pytest

from webhook.core.quantity import parse


@pytest.mark.parametrize(
    ("text", "value", "printed"),
    [
        pytest.param("1Gi", "1073741824", "1Gi", id="binary-canonical-kept"),
        pytest.param("1073741824", "1073741824", "1073741824", id="plain-number-kept"),
        pytest.param("1024Mi", "1073741824", "1Gi", id="binary-canonicalised"),
        pytest.param("1.5Gi", "1610612736", "1536Mi", id="binary-fraction"),
        pytest.param("0.5Ki", "512", "512", id="binary-below-1024-is-decimal"),
        pytest.param("8Gi", "8589934592", "8Gi", id="binary-multiple-of-8"),
        pytest.param("1000", "1000", "1k", id="decimal-canonicalised"),
        pytest.param("1500", "1500", "1500", id="decimal-kept"),
        pytest.param("0.5", "0.5", "500m", id="fraction-in-milli"),
        pytest.param("100m", "0.1", "100m", id="milli"),
        pytest.param("1e3", "1000", "1e3", id="exponent-kept"),
        pytest.param("1000e0", "1000", "1e3", id="exponent-canonicalised"),
        pytest.param("0.1n", "0.000000001", "1n", id="rounded-up-to-nano"),
        pytest.param("-1Gi", "-1073741824", "-1Gi", id="negative"),
        pytest.param("0", "0", "0", id="zero"),
        pytest.param("000", "0", "0", id="zeros"),
        pytest.param(" 2Gi ", "2147483648", "2Gi", id="spaces-trimmed"),
        pytest.param("12345678901234567890", str(2**63 - 1), str(2**63 - 1), id="capped-at-int64"),
        pytest.param("5e100", str(2**63 - 1), str(2**63 - 1), id="huge-exponent-capped"),
        pytest.param("Gi", "0", "0", id="suffix-alone-is-zero-as-in-go"),
    ],
)
def test_parse(text: str, value: str, printed: str) -> None:
    quantity = parse(text)
    assert quantity is not None
    assert quantity.value == Decimal(value)
    assert quantity.text == printed


@pytest.mark.parametrize("text", ["", "x", "1K", "1Gb", "1e", "--1", "1.2.3", "1Gix"])
def test_not_a_quantity(text: str) -> None:
    assert parse(text) is None


def test_equal_values_in_other_units_are_the_same_quantity() -> None:
    assert {parse(t).value for t in ("1Gi", "1073741824", "1024Mi", "1048576Ki")} == {Decimal(2**30)}  # type: ignore[union-attr]
