"""Only the names Kubernetes uses read a field: a member spelled as the Python attribute is unknown to
the API server and to Grove, and is left alone like any other unknown member."""

from __future__ import annotations

import base64
from typing import Any

import jsonpatch
import orjson
import pytest

from core import answers
from core.podcliquesets import create
from core.workload import grove_pod, pod_review, workload_pcs, workload_pcs_raw

WORKER_A_CLAIMS = 5


def mutated(pod: dict[str, Any]) -> dict[str, Any]:
    source = answers.Source([(workload_pcs())])
    answer = answers.mutated(pod_review(pod), source).body["response"]
    assert source.lookups == [("default", "rs-test")]
    assert answer["allowed"] is True
    return jsonpatch.apply_patch(pod, orjson.loads(base64.b64decode(answer["patch"])))


@pytest.mark.parametrize(
    ("member", "value"),
    [
        pytest.param("init_containers", [{"name": "setup"}], id="init_containers"),
        pytest.param("resource_claims", [{"name": "mine", "resourceClaimName": "mine"}], id="resource_claims"),
    ],
)
def test_a_pod_member_with_a_python_name_is_not_patched(member: str, value: list[dict[str, str]]) -> None:
    """The patch once targeted /spec/initContainers/0 (or appended to /spec/resourceClaims) for such
    a pod, which has neither: the API server could not apply it and refused the pod."""
    pod = grove_pod(workload_pcs_raw(), 0, "worker-a", 0)
    pod["spec"][member] = value
    patched = mutated(pod)
    assert patched["spec"][member] == value
    assert len(patched["spec"]["resourceClaims"]) == WORKER_A_CLAIMS
    assert "initContainers" not in patched["spec"]


def test_a_podcliqueset_member_with_a_python_name_is_not_validated() -> None:
    """Grove does not read ``resource_sharing``, so its entries are not judged either."""
    pcs = workload_pcs_raw()
    del pcs["spec"]["template"]["resourceSharing"]
    pcs["spec"]["template"]["resource_sharing"] = [{"name": "x", "scope": "Bogus"}]
    assert create(pcs)["allowed"] is True
