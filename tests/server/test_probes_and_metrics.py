"""GET /healthz, /readyz and /metrics as a kubelet and a Prometheus scraper see them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from server.asgi import call
from server.memorystore import MemoryStore
from prometheus_client.parser import text_string_to_metric_families
from server.reviews import VALIDATE, bad_scope_pcs, body, review, workload_pcs

from webhook.server.app import create_app
from webhook.server.limits import Lifecycle
from webhook.settings import ServeSettings


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_healthz_answers_while_the_process_lives() -> None:
    response = call(create_app(ServeSettings(), MemoryStore(ready=False)), "GET", "/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


@pytest.mark.parametrize(
    ("store_ready", "draining", "status", "answer"),
    [
        pytest.param(True, False, 200, {"status": "ready"}, id="synced"),
        pytest.param(False, False, 503, {"status": "object store not synced"}, id="store-not-synced"),
        pytest.param(True, True, 503, {"status": "shutting down"}, id="shutting-down"),
    ],
)
def test_readyz_is_200_only_once_synced_and_until_shutdown(store_ready: bool, draining: bool, status: int, answer: dict[str, str]) -> None:
    app = create_app(ServeSettings(), MemoryStore(ready=store_ready), lifecycle=Lifecycle(draining=draining))
    response = call(app, "GET", "/readyz")
    assert (response.status_code, response.json()) == (status, answer)


def test_metrics_count_requests_by_webhook_operation_and_decision() -> None:
    app = create_app(ServeSettings(max_body_bytes=100_000), MemoryStore())
    call(app, "POST", VALIDATE, body(review(workload_pcs())))
    call(app, "POST", VALIDATE, body(review(workload_pcs())))
    call(app, "POST", VALIDATE, body(review(bad_scope_pcs())))
    call(app, "POST", VALIDATE, body(review(operation="DELETE")))
    call(app, "POST", VALIDATE, b"not json")
    call(app, "POST", VALIDATE, b" " * 100_001)
    response = call(app, "GET", "/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    found = samples(response.text)
    requests = "webhook_requests_total"
    webhook = ("webhook", "validate-podcliqueset")
    assert found[(requests, (("decision", "allowed"), ("operation", "CREATE"), webhook))] == 2
    assert found[(requests, (("decision", "denied"), ("operation", "CREATE"), webhook))] == 1
    assert found[(requests, (("decision", "allowed"), ("operation", "DELETE"), webhook))] == 1
    assert found[(requests, (("decision", "rejected"), ("operation", "unknown"), webhook))] == 2
    assert found[("webhook_request_duration_seconds_count", (webhook,))] == 6
    assert found[("webhook_store_objects", ())] == 0
    assert found[("webhook_store_synced", ())] == 1
    assert found[("webhook_certificate_reloads_total", ())] == 0
    assert found[("webhook_certificate_reload_errors_total", ())] == 0
    assert found[("webhook_requests_in_flight", (webhook,))] == 0
    assert found[("webhook_requests_in_flight", (("webhook", "mutate-pod"),))] == 0


def test_metrics_have_the_process_and_python_series_and_no_created_series() -> None:
    app = create_app(ServeSettings(), MemoryStore())
    call(app, "POST", VALIDATE, body(review(workload_pcs())))
    text = call(app, "GET", "/metrics").text
    names = {name for name, _ in samples(text)}
    assert not [name for name in names if name.endswith("_created")]
    assert {"process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds", "process_start_time_seconds"} <= names
    assert {"python_info", "python_gc_collections_total"} <= names
    assert samples(text)[("process_resident_memory_bytes", ())] > 10_000_000


def test_in_flight_counts_the_requests_being_read_or_decided() -> None:
    app = create_app(ServeSettings(), MemoryStore())
    in_flight = ("webhook_requests_in_flight", (("webhook", "validate-podcliqueset"),))

    async def scenario() -> tuple[float, float]:
        release = asyncio.Event()

        async def slow_body() -> AsyncIterator[bytes]:
            content = body(review(workload_pcs()))
            yield content[:10]
            await release.wait()
            yield content[10:]

        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="https://webhook.test") as client:
            posting = asyncio.create_task(client.post(VALIDATE, content=slow_body()))
            deadline = asyncio.get_running_loop().time() + 10
            while (during := samples((await client.get("/metrics")).text).get(in_flight)) != 1:
                assert asyncio.get_running_loop().time() < deadline, f"in flight: {during}"
                await asyncio.sleep(0.01)
            release.set()
            assert (await posting).json()["response"]["allowed"] is True
            return during, samples((await client.get("/metrics")).text)[in_flight]

    assert asyncio.run(scenario()) == (1, 0)


def test_each_app_counts_alone() -> None:
    first = create_app(ServeSettings(), MemoryStore())
    second = create_app(ServeSettings(), MemoryStore())
    call(first, "POST", VALIDATE, body(review(workload_pcs())))
    found = samples(call(second, "GET", "/metrics").text)
    assert not any(name == "webhook_requests_total" for name, _ in found)
