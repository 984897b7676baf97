"""The API server goes away and comes back (a proxy between reconciler and server is cut): the
reconciler is back within seconds of its return, however long it was away and however often, and
says so in a few lines: no urllib3 retry lines, no tracebacks."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakeapi import CuttableProxy, FakeApiServer, wait_until

from reconciler.conftest import Start
from reconciler.objects import podcliqueset

PER_REPLICA = [{"name": "gpu", "scope": "PerReplica"}]
BACK_WITHIN = 8.0
"""Seconds from the server's return to converged claims the test waits: the informers retry at
least every 2 s, and a PodCliqueSet whose writes failed before is retried when they are back (its
own backoff, 30 s here, is not waited out)."""


@pytest.fixture
def proxy(fake_api: FakeApiServer) -> Iterator[CuttableProxy]:
    with CuttableProxy((fake_api.host, fake_api.port)) as cuttable:
        yield cuttable


def claims(fake_api: FakeApiServer) -> int:
    return len(fake_api.list("resourceclaims", "default"))


def failures(running: Any) -> float:
    return running.controller.metrics.registry.get_sample_value("grove_sharing_reconciler_reconcile_errors_total") or 0


def test_after_outages_claims_converge_within_seconds_of_the_return_in_a_few_log_lines(
    fake_api: FakeApiServer, proxy: CuttableProxy, tmp_path: Path, start_reconciler: Start,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    running = start_reconciler(kubeconfig=proxy.write_kubeconfig(tmp_path / "kubeconfig"), backoff_base=30.0,
                               backoff_max=300.0)
    running.wait_active()
    fake_api.create(podcliqueset("solo", PER_REPLICA, replicas=1))
    wait_until(lambda: claims(fake_api) == 1, message="first claim")
    informers = [informer for watched in running.controller.caches.informers for informer in watched]

    for outage, (replicas, meanwhile) in enumerate(((3, 3), (5, 6))):
        # Writes fail for a moment: the PodCliqueSet is to wait out a 30 s backoff...
        fake_api.fail_next("POST", "/resourceclaims$", 503, "ServiceUnavailable", times=1000)
        before = failures(running)
        fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": replicas}})
        wait_until(lambda: failures(running) > before, message="a reconcile failed")
        # ...and then the server is away long enough for every watch to fail four times in a row;
        # the second time, the PodCliqueSet changes meanwhile.
        proxy.cut()
        fake_api.faults.clear()
        fake_api.patch("podcliquesets", "default", "solo", {"spec": {"replicas": meanwhile}})
        wait_until(lambda: all(i.attempts.failures >= 4 for i in informers), timeout=15, message=f"outage {outage}")

        proxy.restore()
        back = time.monotonic()
        wait_until(lambda: claims(fake_api) == meanwhile, timeout=BACK_WITHIN, message=f"converged after {outage}")
        wait_until(lambda: not any(i.attempts.failures for i in informers), timeout=BACK_WITHIN, message="every watch back")
        assert time.monotonic() - back < BACK_WITHIN

    records = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert [r for r in caplog.records if r.exc_info] == []
    assert [r.getMessage() for r in records if r.name.startswith("urllib3") or "Retrying" in r.getMessage()] == []
    warnings = [r.getMessage() for r in records if r.levelno >= logging.WARNING]
    # Per outage: one line per watch when it fails (repeats go to DEBUG), one for the failed writes.
    assert sum("list/watch of" in w for w in warnings) == 2 * len(informers)
    assert len(warnings) <= 2 * (len(informers) + 2), warnings
    back_lines = [r.getMessage() for r in records if " is back after " in r.getMessage()]
    assert len(back_lines) == 2 * len(informers)
