"""A pod as the mutating webhook reads it: the usual pod checked where it lies and used as parsed,
anything else read through pydantic, with the same result either way."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from fuzz.answers import FUZZ
from fuzz.strategies import dumps, mutated
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from core.workload import grove_pod, workload_pcs_raw
from webhook.core.model import pod as pods
from webhook.core.pod.patch import shape_of

POD = grove_pod(workload_pcs_raw(), 0, "worker-a", 0)
POD["spec"]["containers"][0]["resources"] = {"claims": [{"name": "mine"}], "limits": {"cpu": "1"}}
POD["metadata"]["annotations"] = {"note": "kept"}


def _seen(read: Any, obj: Any, whole: bool = True) -> tuple[Any, ...] | str:
    """What the webhook reads of a pod: its metadata's members and (``whole``) its shape; or where
    it is refused."""
    try:
        pod = read(obj)
    except ValidationError as err:
        return str(err.errors(include_url=False)[0]["loc"])
    meta = pods.metadata(pod)
    return (*(meta.get(m) for m in ("name", "generateName", "namespace", "labels")), shape_of(pod) if whole else None)


@settings(FUZZ, max_examples=300)
@given(data=st.data())
def test_any_pod_is_read_as_pydantic_reads_it(data: st.DataObject) -> None:
    try:
        obj = orjson.loads(dumps(data.draw(mutated(POD, depths=(64,)))))
    except orjson.JSONDecodeError:
        return
    assert _seen(pods.read_pod, obj) == _seen(pods._read_pod, obj)
    assert _seen(pods.read_pod_header, obj, whole=False) == _seen(pods._read_pod_header, obj, whole=False)


def test_the_usual_pod_is_used_as_parsed() -> None:
    obj = orjson.loads(orjson.dumps(POD))
    assert pods.read_pod(obj) is obj


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda p: p["metadata"]["labels"].update(a=None), id="null-label"),
        pytest.param(lambda p: p["metadata"].update(name=None), id="null-name"),
        pytest.param(lambda p: p["spec"].update(containers=None), id="null-containers"),
        pytest.param(lambda p: p["spec"]["containers"][0].update(name=7), id="number-name"),
        pytest.param(lambda p: p["spec"].update(resourceClaims=[{"name": None}]), id="null-claim-name"),
    ],
)
def test_an_unusual_pod_is_read_by_pydantic(change: Any) -> None:
    obj = orjson.loads(orjson.dumps(POD))
    change(obj)
    assert _seen(pods.read_pod, obj) == _seen(pods._read_pod, obj)
