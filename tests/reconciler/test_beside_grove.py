"""Who makes a PodCliqueSet's claims (``--claims``). Beside Grove's own operator, which makes them
(its claims say so in their managed fields), the reconciler creates, changes and deletes none of
them, says so, and reports claims still missing after a while; beside one that does not, it makes
them after a grace period for the first PodCliqueSet of a namespace, at once for the next; and a
user can force either way."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fakeapi import FakeApiServer, wait_until

from reconciler.conftest import WRITE_VERBS, Running, Start
from reconciler.objects import GPU_SPEC, claim, controller, events, grove_labels, podcliqueset
from webhook.reconciler.sync import reconcile

PER_REPLICA = [{"name": "gpu", "scope": "PerReplica"}]
GROVE_MADE = [{
    "manager": "grove-operator", "operation": "Update", "apiVersion": "resource.k8s.io/v1", "time": "2026-11-28T16:00:00Z",
    "fieldsType": "FieldsV1", "fieldsV1": {
        "f:metadata": {"f:labels": {".": {}, "f:app.kubernetes.io/managed-by": {}}, "f:ownerReferences": {".": {}}},
        "f:spec": {"f:devices": {}},
    },
}]
"""A claim's managed fields as Grove's operator leaves them: its create set Grove's labels and owner."""


def grove_claim(fake_api: FakeApiServer, pcs: str, replica: int) -> None:
    """A claim of replica ``replica`` made as Grove's operator makes them."""
    owner = fake_api.get("podcliquesets", "default", pcs)
    made = claim(f"{pcs}-{replica}-gpu", grove_labels(pcs, **{"grove.io/podcliqueset-replica-index": str(replica)}), [controller(owner)])
    made["metadata"]["managedFields"] = GROVE_MADE
    fake_api.create({**made, "spec": GPU_SPEC})


def claims(fake_api: FakeApiServer, pcs: str) -> list[str]:
    return sorted(c["metadata"]["name"] for c in fake_api.list("resourceclaims", "default", label_selector=f"app.kubernetes.io/part-of={pcs}"))


def claim_writes(running: Running) -> int:
    calls = running.controller.api.access.calls
    return sum(n for (_, resource, verb), n in calls.items() if resource == "resourceclaims" and verb in WRITE_VERBS)


def made_by(running: Running, maker: str) -> float | None:
    registry = running.controller.metrics.registry
    return registry.get_sample_value("grove_sharing_reconciler_podcliquesets", {"claims_made_by": maker})


def test_beside_an_operator_that_makes_claims_the_reconciler_writes_none_and_reports_what_stays_missing(
    fake_api: FakeApiServer, kube_api_client: Any, start_reconciler: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reconcile, "MISSING_AFTER", 0.5)
    running = start_reconciler(claims_grace=5.0)
    running.wait_active()

    fake_api.create(podcliqueset("solo", PER_REPLICA, replicas=2))
    grove_claim(fake_api, "solo", 0)  # a moment after the PodCliqueSet, as Grove's operator makes them

    stepped_back = "Grove's operator makes the ResourceClaims of this PodCliqueSet: the reconciler creates, changes and deletes none of them (--claims auto)"
    wait_until(lambda: events(kube_api_client, "ResourceClaimsMadeByGrove") == [("PodCliqueSet/solo", "Normal", stepped_back, 1)],
               message="the reconciler says it steps back")
    assert made_by(running, "grove-operator") == 1 and made_by(running, "reconciler") == 0
    # Grove's operator has not made solo-1-gpu: reported on its owner, never made.
    missing = wait_until(lambda: events(kube_api_client, "ResourceClaimMissing"), message="the missing claim reported")
    assert [(about, kind) for about, kind, _, _ in missing] == [("PodCliqueSet/solo", "Warning")]
    assert missing[0][2] == ("Missing ResourceClaim solo-1-gpu for 0.5 s or more: Grove's operator makes the claims of this "
                             "PodCliqueSet, and the reconciler makes none of them (--claims auto)")
    # Scaled in, its stale claim is Grove's to delete; scaled out, its new claims are Grove's to make.
    grove_claim(fake_api, "solo", 1)
    fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": 1}})
    fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": 3}})
    wait_until(lambda: any(m.startswith("Missing ResourceClaim solo-2-gpu ") for _, _, m, _ in events(kube_api_client, "ResourceClaimMissing")),
               message="the scale-out's claim reported missing")
    assert claims(fake_api, "solo") == ["solo-0-gpu", "solo-1-gpu"]
    assert claim_writes(running) == 0


def test_beside_an_operator_that_does_not_the_first_podcliqueset_of_a_namespace_waits_the_grace_period(
    fake_api: FakeApiServer, start_reconciler: Start
) -> None:
    grace = 1.0
    running = start_reconciler(claims_grace=grace)
    running.wait_active()

    created = time.monotonic()
    fake_api.create(podcliqueset("first", PER_REPLICA, replicas=2))
    wait_until(lambda: claims(fake_api, "first") == ["first-0-gpu", "first-1-gpu"], message="the first PodCliqueSet's claims")
    assert time.monotonic() - created >= grace
    created = time.monotonic()
    fake_api.create(podcliqueset("next", PER_REPLICA, replicas=2))
    wait_until(lambda: claims(fake_api, "next") == ["next-0-gpu", "next-1-gpu"], message="the next one's claims")
    assert time.monotonic() - created < grace, "the reconciler has made claims in this namespace, and nobody else has"
    assert made_by(running, "reconciler") == 2 and made_by(running, "grove-operator") == 0


@pytest.mark.parametrize(("setting", "made"), [("always", ["solo-0-gpu", "solo-1-gpu"]), ("never", ["solo-0-gpu"])])
def test_a_user_forces_either_way(fake_api: FakeApiServer, start_reconciler: Start, setting: str, made: list[str]) -> None:
    running = start_reconciler(claims=setting, claims_grace=30.0)
    running.wait_active()
    fake_api.create(podcliqueset("solo", PER_REPLICA, replicas=2))
    grove_claim(fake_api, "solo", 0)

    wait_until(lambda: made_by(running, "reconciler" if setting == "always" else "grove-operator") == 1, message="decided")
    wait_until(lambda: claims(fake_api, "solo") == made, message=f"claims with --claims {setting}")
    assert (claim_writes(running) > 0) == (setting == "always")
