"""Reading a List response one item at a time."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from webhook.kube.informer import read_list


def read(data: bytes) -> tuple[dict[str, Any], list[Any]]:
    items: list[Any] = []
    return read_list(data, items.append), items


def test_items_are_handed_over_and_the_other_members_returned() -> None:
    listing = {
        "apiVersion": "grove.io/v1alpha1",
        "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b", "labels": {"x": "é\n"}}}],
        "kind": "PodCliqueSetList",
        "metadata": {"continue": "token", "resourceVersion": "42"},
    }
    members, items = read(orjson.dumps(listing))
    assert items == listing["items"]
    assert members == {k: v for k, v in listing.items() if k != "items"}


def test_white_space_anywhere_and_items_that_are_not_objects() -> None:
    members, items = read(b' {\n "items" : [ {"a": 1} ,\t3 , {"b": [1, 2]} ] , "metadata" : {} } ')
    assert (members, items) == ({"metadata": {}}, [{"a": 1}, {"b": [1, 2]}])


@pytest.mark.parametrize("data", [b"{}", b'{"items": []}', b'{"items": null}'])
def test_no_items(data: bytes) -> None:
    assert read(data)[1] == []


def test_each_item_is_handed_over_before_the_next_is_read() -> None:
    """So a page never lives in memory parsed whole: the second item is malformed, and the first
    has been handed over by the time that is found."""
    items: list[Any] = []
    with pytest.raises(ValueError):
        read_list(b'{"items": [{"a": 1}, {"b": ]}', items.append)
    assert items == [{"a": 1}]


@pytest.mark.parametrize("data", [b"", b"[]", b'{"items": [1,}', b'{"a" 1}', b"{1: 2}", b'{"a": 1', b'{"items": [{}'])
def test_a_malformed_body_is_a_value_error(data: bytes) -> None:
    with pytest.raises(ValueError):
        read(data)
