"""Template reads: one read of an external template for every worker that needs it at the same
moment, remembered a few seconds (a missing one for less), a failure to reach the API server not
remembered at all."""

from __future__ import annotations

import threading
from typing import Any

import orjson
import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.model.meta import ObjectKey
from webhook.kube import templates
from webhook.kube.templates import TemplateError, TemplateReads

TEMPLATE = ObjectKey("shared", "gpu")
SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


class Response:
    def __init__(self, body: bytes) -> None:
        self.data = body

    def release_conn(self) -> None:
        pass


class FakeTemplates:
    """``ResourceV1Api`` as far as template reads use it: answers from ``found``, counts reads,
    and can hold every read until released."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, str], Any] = {}
        self.reads = 0
        self.release = threading.Event()
        self.release.set()

    def read_namespaced_resource_claim_template(self, name: str, namespace: str, **_: Any) -> Response:
        self.reads += 1
        self.release.wait(5)
        found = self.found.get((namespace, name))
        if isinstance(found, Exception):
            raise found
        if found is None:
            raise ApiException(status=404, reason="Not Found")
        return Response(orjson.dumps({"spec": {"spec": found}}))


def reads_with(fake: FakeTemplates, clock: Clock) -> TemplateReads:
    reads = TemplateReads(client.ApiClient(), clock=clock)
    reads._api = fake  # type: ignore[assignment]
    return reads


def test_template_reads_are_shared_by_workers_asking_at_once() -> None:
    fake, clock = FakeTemplates(), Clock()
    fake.found[("shared", "gpu")] = SPEC
    fake.release.clear()
    reads = reads_with(fake, clock)
    results: list[Any] = []
    workers = [threading.Thread(target=lambda: results.append(reads.spec(TEMPLATE))) for _ in range(4)]
    for worker in workers:
        worker.start()
    fake.release.set()
    for worker in workers:
        worker.join(5)
    assert (results, fake.reads) == ([SPEC] * 4, 1)


def test_template_reads_are_remembered_for_seconds_and_a_missing_template_for_fewer() -> None:
    fake, clock = FakeTemplates(), Clock()
    reads = reads_with(fake, clock)
    with pytest.raises(TemplateError) as missing:
        reads.spec(TEMPLATE)
    assert missing.value.missing
    fake.found[("shared", "gpu")] = SPEC
    clock.now += templates.MISSING_TTL / 2
    with pytest.raises(TemplateError):
        reads.spec(TEMPLATE)  # still remembered as missing
    clock.now += templates.MISSING_TTL
    assert reads.spec(TEMPLATE) == SPEC  # created since: read again
    fake.found[("shared", "gpu")] = {"devices": {"requests": []}}
    clock.now += templates.FOUND_TTL / 2
    assert reads.spec(TEMPLATE) == SPEC
    clock.now += templates.FOUND_TTL
    assert reads.spec(TEMPLATE) == {"devices": {"requests": []}}
    assert fake.reads == 3


def test_template_reads_that_reach_no_api_server_are_not_remembered() -> None:
    fake, clock = FakeTemplates(), Clock()
    fake.found[("shared", "gpu")] = ApiException(status=0, reason="connection refused")
    reads = reads_with(fake, clock)
    with pytest.raises(ApiException):
        reads.spec(TEMPLATE)
    fake.found[("shared", "gpu")] = SPEC
    assert reads.spec(TEMPLATE) == SPEC
