"""Template reads: one read of an external template for every worker that needs it at the same
moment, remembered a few seconds (a missing one for less), a failure to reach the API server not
remembered at all."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from fakeapi import CuttableProxy, FakeApiServer, new_api_client

from webhook.core.model.meta import ObjectKey
from webhook.kube import templates
from webhook.kube.api import is_connection_error
from webhook.kube.templates import TemplateError, TemplateReads

TEMPLATE = ObjectKey("shared", "gpu")
SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
READS = r"/namespaces/shared/resourceclaimtemplates/gpu$"


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def template(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu", "namespace": "shared"}, "spec": {"spec": spec}}


def test_template_reads_are_shared_by_workers_asking_at_once(fake_api: FakeApiServer, kube_api_client: Any) -> None:
    fake_api.create(template(SPEC))
    fake_api.hold_next("GET", READS, 0.3)
    reads = TemplateReads(kube_api_client, clock=Clock())
    results: list[Any] = []
    workers = [threading.Thread(target=lambda: results.append(reads.spec(TEMPLATE))) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(5)
    assert (results, fake_api.requests.count("GET", READS)) == ([SPEC] * 4, 1)


def test_template_reads_are_remembered_for_seconds_and_a_missing_template_for_fewer(
    fake_api: FakeApiServer, kube_api_client: Any
) -> None:
    clock = Clock()
    reads = TemplateReads(kube_api_client, clock=clock)
    with pytest.raises(TemplateError) as missing:
        reads.spec(TEMPLATE)
    assert missing.value.missing
    fake_api.create(template(SPEC))
    clock.now += templates.MISSING_TTL / 2
    with pytest.raises(TemplateError):
        reads.spec(TEMPLATE)  # still remembered as missing
    clock.now += templates.MISSING_TTL
    assert reads.spec(TEMPLATE) == SPEC  # created since: read again
    fake_api.patch("resourceclaimtemplates", "shared", "gpu", {"spec": {"spec": {"devices": {"requests": []}}}})
    clock.now += templates.FOUND_TTL / 2
    assert reads.spec(TEMPLATE) == SPEC
    clock.now += templates.FOUND_TTL
    assert reads.spec(TEMPLATE) == {"devices": {"requests": []}}
    assert fake_api.requests.count("GET", READS) == 3


def test_template_reads_that_reach_no_api_server_are_not_remembered(fake_api: FakeApiServer, tmp_path: Path) -> None:
    fake_api.create(template(SPEC))
    with CuttableProxy((fake_api.host, fake_api.port)) as proxy:
        api = new_api_client(proxy.write_kubeconfig(tmp_path / "kubeconfig"))
        api.configuration.retries = False
        reads = TemplateReads(api, clock=Clock())
        proxy.cut()
        with pytest.raises(Exception) as unreachable:
            reads.spec(TEMPLATE)
        assert is_connection_error(unreachable.value)
        proxy.restore()
        assert reads.spec(TEMPLATE) == SPEC
