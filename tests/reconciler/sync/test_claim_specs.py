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
from webhook.reconciler.sync import templatecache as templates

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
