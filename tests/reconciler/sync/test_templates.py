"""External templates: read only for claims that must be created, and read once for all the
PodCliqueSets that need one at a time; a missing one is reported on the owner and retried (soon,
whatever the backoff), and holds up nothing else."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fakeapi import FakeApiServer, wait_until

from reconciler.conftest import Start
from reconciler.expected import SPECS, actual
from reconciler.grove import GroveOperator, ext_ns_template, workload
from reconciler.objects import GPU_SPEC, events, podcliqueset
from webhook.kube import templates
from webhook.reconciler.sync import reconcile

TTL = 0.3


def external(name: str = "ext") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": GPU_SPEC},
    }


def test_a_missing_external_template_is_reported_retried_and_blocks_nothing_else(
    fake_api: FakeApiServer, kube_api_client: Any, start_reconciler: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(templates, "FOUND_TTL", TTL)
    start_reconciler().wait_active()
    ext_tpl, pcs = workload()
    ext_tpl["metadata"]["namespace"] = "default"
    fake_api.create(ext_tpl)
    fake_api.create(ext_ns_template())
    grove = GroveOperator(fake_api, pcs)
    grove.sync()
    wait_until(lambda: len(actual(fake_api)) == 12, message="12 claims")

    # Both external templates go away. Owners whose claims exist are not held up: worker-a scales
    # out and gets its new claim, though its other entry names a template that no longer exists.
    fake_api.delete("resourceclaimtemplates", "default", "ext-tpl")
    fake_api.delete("resourceclaimtemplates", "rs-shared", "ext-ns-tpl")
    deleted = time.monotonic()
    wait_until(lambda: time.monotonic() - deleted > TTL, message="the templates read before are stale")
    fake_api.requests.reset()
    grove.scale("podcliques", "rs-test-0-worker-a", 2)
    wait_until(lambda: "rs-test-0-worker-a-1-int-tpl4" in actual(fake_api), message="scale-out claim")
    assert fake_api.requests.count("GET", "/resourceclaimtemplates/") == 0

    # A new PodCliqueSet replica needs claims from both: those are reported and retried, every
    # other claim of the replica is created, including the other claims of the same owners.
    grove.scale("podcliquesets", "rs-test", 2)
    wait_until(lambda: len(actual(fake_api)) == 13 + 8, message="the replica's claims from internal templates")
    assert "rs-test-1-int-tpl" in actual(fake_api) and "rs-test-1-worker-a-0-int-tpl4" in actual(fake_api)
    assert "rs-test-1-ext-tpl" not in actual(fake_api)
    not_found = [
        (
            "PodClique/rs-test-1-worker-a",
            "Warning",
            'ref "ext-ns-tpl" (spec.template.cliques[0].resourceSharing[1]): failed to get external '
            'ResourceClaimTemplate rs-shared/ext-ns-tpl: resourceclaimtemplates.resource.k8s.io "ext-ns-tpl" not found',
        ),
        (
            "PodCliqueSet/rs-test",
            "Warning",
            'ref "ext-tpl" (spec.template.resourceSharing[1]): failed to get external ResourceClaimTemplate '
            'default/ext-tpl: resourceclaimtemplates.resource.k8s.io "ext-tpl" not found',
        ),
    ]
    wait_until(
        lambda: [e[:3] for e in events(kube_api_client, "ResourceClaimTemplateNotFound")] == not_found,
        message="missing templates reported",
    )
    wait_until(
        lambda: all(count >= 2 for *_, count in events(kube_api_client, "ResourceClaimTemplateNotFound")),
        message="retried with backoff, each repeat counted on the same Event",
    )

    # The templates come back: the claims appear, with the templates' specs.
    ext_tpl["metadata"].pop("resourceVersion", None)
    fake_api.create(ext_tpl)
    fake_api.create(ext_ns_template())
    wait_until(lambda: len(actual(fake_api)) == 23, message="all claims once the templates exist")
    assert actual(fake_api)["rs-test-1-ext-tpl"][2] == SPECS["ext-tpl"]
    assert actual(fake_api)["rs-test-1-worker-a-all-ext-ns-tpl"][2] == SPECS["ext-ns-tpl"]


def test_podcliquesets_created_together_share_one_read_of_their_template(
    fake_api: FakeApiServer, start_reconciler: Start
) -> None:
    fake_api.create(external())
    start_reconciler(workers=4).wait_active()
    for n in range(20):
        fake_api.create(podcliqueset(f"p{n}", [{"name": "ext", "scope": "AllReplicas"}], templates=()))
    wait_until(lambda: len(fake_api.list("resourceclaims", "default")) == 20, message="20 claims")
    assert fake_api.requests.count("GET", "/resourceclaimtemplates/ext$") == 1


def test_a_template_created_later_is_picked_up_soon_whatever_the_backoff(
    fake_api: FakeApiServer, kube_api_client: Any, start_reconciler: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without its own retry bound, a failure would be retried only after --backoff-base (20 s
    here, doubling); a missing template is looked for again within ``TEMPLATE_RETRY`` seconds
    (5, and 2 s of remembering it missing: within 7 s) however often it has failed."""
    assert reconcile.TEMPLATE_RETRY + templates.MISSING_TTL <= 7
    monkeypatch.setattr(reconcile, "TEMPLATE_RETRY", 0.5)
    monkeypatch.setattr(templates, "MISSING_TTL", 0.2)
    running = start_reconciler(backoff_base=20.0, backoff_max=300.0)
    running.wait_active()
    fake_api.create(podcliqueset("late", [{"name": "ext", "scope": "AllReplicas"}], templates=()))
    wait_until(lambda: events(kube_api_client, "ResourceClaimTemplateNotFound"), message="missing template reported")

    fake_api.create(external())

    claim = wait_until(lambda: fake_api.get("resourceclaims", "default", "late-all-ext"), timeout=3, message="claim")
    assert claim["spec"] == GPU_SPEC
