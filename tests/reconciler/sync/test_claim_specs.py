"""What a claim is created with from an external template (BEHAVIOUR.md §6.4, §9 item 13):
the template's ``spec.spec`` as it is at creation (read at most ``FOUND_TTL`` seconds before:
template reads are shared), never its claim metadata; a claim's spec is never changed afterwards."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fakeapi import FakeApiServer, wait_until

from reconciler.conftest import Start
from reconciler.objects import GPU_SPEC, OTHER_SPEC, grove_labels, podcliqueset
from webhook.kube import templates

TTL = 0.3


def template(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "ext", "namespace": "default"},
        "spec": {"metadata": {"labels": {"from-template": "yes"}, "annotations": {"note": "never copied"}}, "spec": spec},
    }


def test_claims_take_the_external_template_as_it_is_when_they_are_created(
    fake_api: FakeApiServer, start_reconciler: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(templates, "FOUND_TTL", TTL)
    fake_api.create(template(GPU_SPEC))
    start_reconciler().wait_active()
    fake_api.create(podcliqueset("solo", [{"name": "ext", "scope": "PerReplica"}], templates=()))
    first = wait_until(lambda: fake_api.get("resourceclaims", "default", "solo-0-ext"), message="claim created")
    assert first["spec"] == GPU_SPEC
    assert first["metadata"]["labels"] == grove_labels("solo", **{"grove.io/podcliqueset-replica-index": "0"})
    assert "annotations" not in first["metadata"]

    fake_api.patch("resourceclaimtemplates", "default", "ext", {"spec": {"spec": OTHER_SPEC}})
    changed = time.monotonic()
    wait_until(lambda: time.monotonic() - changed > TTL, message="the template read shared by then is stale")
    fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": 2}})

    later = wait_until(lambda: fake_api.get("resourceclaims", "default", "solo-1-ext"), message="claim for replica 1")
    assert later["spec"] == OTHER_SPEC
    assert fake_api.get("resourceclaims", "default", "solo-0-ext") == first


NEWER_SPEC = {
    "devices": {
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "aFieldOfKubernetes1_99": {"x": 1}}}],
        "aFieldOfKubernetes1_99": ["kept"],
    }
}
"""A spec with fields newer than the Python client: the client's typed models refuse them."""


@pytest.mark.parametrize("source", ["internal", "external"])
def test_a_template_field_newer_than_the_client_reaches_the_api_server(
    fake_api: FakeApiServer, start_reconciler: Start, source: str
) -> None:
    """The claim is sent as the template gave it, for the API server to validate."""
    start_reconciler().wait_active()
    if source == "external":
        fake_api.create(template(NEWER_SPEC))
        fake_api.create(podcliqueset("newer", [{"name": "ext", "scope": "AllReplicas"}], templates=()))
        name = "newer-all-ext"
    else:
        pcs = podcliqueset("newer", [{"name": "new", "scope": "AllReplicas"}], templates=("new",))
        pcs["spec"]["template"]["resourceClaimTemplates"][0]["templateSpec"]["spec"] = NEWER_SPEC
        fake_api.create(pcs)
        name = "newer-all-new"
    claim = wait_until(lambda: fake_api.get("resourceclaims", "default", name), message="claim created")
    assert claim["spec"] == NEWER_SPEC
