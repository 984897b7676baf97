"""Quantities: compared by value (Semantic.DeepEqual) and printed as apimachinery prints them."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest

from webhook.core.gocompat.quantity import parse


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
        pytest.param("1" * 1_000_000 + "k", str(2**63 - 1), str(2**63 - 1), id="a-million-digits-capped"),
        pytest.param("1" + "0" * 80 + "e-70", "1e10", "10e9", id="long-number-small-exponent-exact"),
        pytest.param("1" + "0" * 5000 + "e-5000", "1", "1", id="five-thousand-digits-scaled-back-to-one"),
        pytest.param("0." + "0" * 5000 + "1", "1e-9", "1n", id="five-thousand-decimals-rounded-up-to-nano"),
    ],
)
def test_parse(text: str, value: str, printed: str) -> None:
    quantity = parse(text)
    assert quantity is not None
    assert quantity.value == Decimal(value)
    assert quantity.text == printed


@pytest.mark.parametrize(
    "text",
    [
        "",
        "x",
        "1K",
        "1Gb",
        "1e",
        "--1",
        "1.2.3",
        "1Gix",
        pytest.param("1e" + "9" * 5000, id="exponent-of-5000-digits"),
        pytest.param("1e-" + "9" * 5000, id="negative-exponent-of-5000-digits"),
    ],
)
def test_not_a_quantity(text: str) -> None:
    assert parse(text) is None


def test_digits_that_do_not_end_as_a_quantity_are_refused_in_linear_time() -> None:
    """Go scans a quantity once; a backtracking pattern took minutes over 3,000 zeros and an ``x``."""
    started = time.perf_counter()
    assert parse("0" * 100_000 + "x") is None
    assert parse("1" * 100_000 + "e+" + "2" * 100_000 + "x") is None
    assert time.perf_counter() - started < 1


def test_equal_values_in_other_units_are_the_same_quantity() -> None:
    assert {parse(t).value for t in ("1Gi", "1073741824", "1024Mi", "1048576Ki")} == {Decimal(2**30)}  # type: ignore[union-attr]
