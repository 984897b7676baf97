"""The probe endpoints of a running reconciler."""

from __future__ import annotations

import urllib.error
import urllib.request

from fakeapi import FakeApiServer, wait_until
from reconciler.conftest import Start


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_not_ready_until_every_cache_has_listed(fake_api: FakeApiServer, start_reconciler: Start) -> None:
    fake_api.fail_next("GET", "/podcliques$", 500, "InternalError", times=1000)
    running = start_reconciler()
    base = f"http://127.0.0.1:{running.controller.health.port}"

    wait_until(lambda: get(base + "/readyz") == (503, "not ready: caches not synced\n"), message="not ready")
    assert get(base + "/healthz") == (200, "ok\n")
    metrics = get(base + "/metrics")[1]
    assert "grove_sharing_reconciler_caches_synced 0.0" in metrics
    assert "\nprocess_resident_memory_bytes " in metrics and "\npython_gc_collections_total{" in metrics
    assert "_created" not in metrics

    fake_api.faults.clear()
    wait_until(lambda: get(base + "/readyz") == (200, "ok\n"), timeout=8, message="ready once listed")
    running.stop()
    assert running.controller.readiness() == "shutting down"
