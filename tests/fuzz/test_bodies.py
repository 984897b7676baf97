"""Any body POSTed to either webhook gets a JSON answer: an AdmissionReview echoing the uid, or HTTP
400 with a one-line error, or 413 when it is over the limit; never a 500 and never code 500."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server.asgi import call, chunks

from fuzz.answers import FUZZ, WEBHOOKS, assert_one_line_error, checked, post, served_app
from fuzz.strategies import EXAMPLES, damaged, dumps, json_values, reviews

EXAMPLE_BODIES = [dumps(document) for document in EXAMPLES.values()]


@pytest.mark.parametrize("path", WEBHOOKS)
@settings(FUZZ, max_examples=100)
@given(body=st.binary(max_size=64) | st.sampled_from(EXAMPLE_BODIES).flatmap(damaged))
def test_any_bytes(path: str, body: bytes) -> None:
    checked(body, post(path, body))


@pytest.mark.parametrize("path", WEBHOOKS)
@settings(FUZZ, max_examples=100)
@given(value=json_values | reviews)
def test_any_json_value(path: str, value: Any) -> None:
    body = dumps(value)
    checked(body, post(path, body))


@pytest.mark.parametrize("path", WEBHOOKS)
@settings(FUZZ, max_examples=60)
@given(value=st.recursive(st.floats() | st.integers(), lambda inner: st.lists(inner, max_size=3), max_leaves=6))
def test_numbers_json_cannot_hold(path: str, value: Any) -> None:
    """NaN, Infinity and integers beyond 64 bits are not JSON (or not JSON any decoder keeps exact)."""
    body = dumps({"request": {"uid": "u", "object": {"spec": {"replicas": value}}}})
    checked(body, post(path, body))


LIMIT = 256
SMALL_LIMIT_APP = served_app(max_body_bytes=LIMIT)


@pytest.mark.parametrize("path", WEBHOOKS)
@settings(FUZZ, max_examples=40)
@given(size=st.integers(0, 3 * LIMIT), chunk=st.integers(1, 2 * LIMIT), streamed=st.booleans())
def test_the_body_limit(path: str, size: int, chunk: int, streamed: bool) -> None:
    """Over the limit is 413 whether the size is announced (Content-Length) or streamed (chunked)."""
    body = b"{}".rjust(size) if size >= 2 else b" " * size
    content = chunks(body, chunk) if streamed else body
    response = call(SMALL_LIMIT_APP, "POST", path, content)
    if size > LIMIT:
        assert response.status_code == 413
        assert_one_line_error(response.json())
    else:
        checked(body, response)
