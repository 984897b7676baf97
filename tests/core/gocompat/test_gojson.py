"""Go's ways of printing values, which Grove's messages embed: ``%q`` and ``json.Marshal``."""

from __future__ import annotations

from typing import Any

import pytest

from webhook.core.gocompat.gojson import GoMap, json_string, marshal, quote


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("gpu-mps", '"gpu-mps"', id="plain"),
        pytest.param('a"b\\c', '"a\\"b\\\\c"', id="quote-and-backslash"),
        pytest.param("<b>&", '"<b>&"', id="html-left-alone"),
        pytest.param("a\nb\tc\rd", '"a\\nb\\tc\\rd"', id="newline-tab-return"),
        pytest.param("\a\b\f\v", '"\\a\\b\\f\\v"', id="bell-backspace-formfeed-vtab"),
        pytest.param("\x01\x1f", '"\\x01\\x1f"', id="other-control-as-hex"),
        pytest.param("\x7f", '"\\x7f"', id="delete"),
        pytest.param("é名", '"é名"', id="printable-unicode-literal"),
        pytest.param("😀", '"😀"', id="astral-printable"),
        pytest.param("\u00a0", '"\\u00a0"', id="no-break-space-escaped"),
        pytest.param("\u2028", '"\\u2028"', id="line-separator"),
        pytest.param("\ue000", '"\\ue000"', id="private-use"),
        pytest.param("\U000e0001", '"\\U000e0001"', id="astral-format-character"),
    ],
)
def test_quote_is_strconv_quote(value: str, expected: str) -> None:
    assert quote(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("gpu-mps", '"gpu-mps"', id="plain"),
        pytest.param("<b>&", '"\\u003cb\\u003e\\u0026"', id="html-escaped"),
        pytest.param('a"b\\c', '"a\\"b\\\\c"', id="quote-and-backslash"),
        pytest.param("\b\f\n\r\t", '"\\b\\f\\n\\r\\t"', id="short-escapes"),
        pytest.param("\x01\x1f\a\v", '"\\u0001\\u001f\\u0007\\u000b"', id="other-control-as-u"),
        pytest.param("\x7f", '"\x7f"', id="delete-literal"),
        pytest.param("é名😀\u00a0", '"é名😀\u00a0"', id="unicode-literal"),
        pytest.param("\u2028\u2029", '"\\u2028\\u2029"', id="line-and-paragraph-separators"),
    ],
)
def test_json_string_is_encoding_json(value: str, expected: str) -> None:
    assert json_string(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(None, "null", id="nil"),
        pytest.param(True, "true", id="true"),
        pytest.param(-1, "-1", id="int"),
        pytest.param([], "[]", id="empty-slice"),
        pytest.param(["a", "<"], '["a","\\u003c"]', id="slice-compact"),
        pytest.param({"name": "x", "scope": "AllReplicas"}, '{"name":"x","scope":"AllReplicas"}', id="struct-in-field-order"),
        pytest.param({"b": 1, "a": 2}, '{"b":1,"a":2}', id="struct-order-kept"),
        pytest.param(GoMap({"b": "1", "a": "2", "B": "3"}), '{"B":"3","a":"2","b":"1"}', id="map-keys-sorted"),
        pytest.param({"m": GoMap({"z": [1], "y": None})}, '{"m":{"y":null,"z":[1]}}', id="nested"),
    ],
)
def test_marshal_is_encoding_json(value: Any, expected: str) -> None:
    assert marshal(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(1.0, "1", id="integral"),
        pytest.param(-0.0, "-0", id="negative-zero"),
        pytest.param(0.1, "0.1", id="shortest-digits"),
        pytest.param(1e20, "100000000000000000000", id="large-positional"),
        pytest.param(1e21, "1e+21", id="from-1e21-exponent"),
        pytest.param(1e-6, "0.000001", id="1e-6-positional"),
        pytest.param(1.5e-7, "1.5e-7", id="below-1e-6-exponent-without-zero"),
        pytest.param(2.5e-300, "2.5e-300", id="tiny"),
    ],
)
def test_floats_are_printed_as_go_prints_float64(value: float, expected: str) -> None:
    assert marshal(value) == expected
