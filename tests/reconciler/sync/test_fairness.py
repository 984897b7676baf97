"""One big PodCliqueSet never holds up another (DECISIONS.md §5): a reconcile that has written for
its budget stops with partial progress and goes behind the PodCliqueSets waiting, so a small one
created while two big ones are being written converges long before they do, and they converge
too. (Small numbers here, a budget of a few milliseconds; bench/reconcile.py has the big ones.)"""

from __future__ import annotations

import pytest
from fakeapi import FakeApiServer, wait_until

from reconciler.conftest import Start
from reconciler.objects import podcliqueset
from webhook.reconciler.sync import reconcile

BIG = 300


def count(fake_api: FakeApiServer, part_of: str) -> int:
    return len(fake_api.list("resourceclaims", "default", label_selector=f"app.kubernetes.io/part-of={part_of}"))


def test_a_small_podcliqueset_is_not_held_up_by_two_big_ones(
    fake_api: FakeApiServer, start_reconciler: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reconcile, "CHUNK", 8)
    running = start_reconciler(workers=2)
    running.controller.reconciler.budget = 0.02
    running.wait_active()
    for name in ("big-a", "big-b"):
        fake_api.create(podcliqueset(name, [{"name": "gpu", "scope": "PerReplica"}], replicas=BIG))
    wait_until(lambda: count(fake_api, "big-a") > 16 and count(fake_api, "big-b") > 16, message="both under way")

    fake_api.create(podcliqueset("small", [{"name": "gpu", "scope": "AllReplicas"}]))

    wait_until(lambda: count(fake_api, "small") == 1, message="the small one converged")
    assert count(fake_api, "big-a") < BIG and count(fake_api, "big-b") < BIG
    wait_until(lambda: count(fake_api, "big-a") + count(fake_api, "big-b") == 2 * BIG, timeout=30, message="big ones")
    assert fake_api.requests.count("DELETE") == 0
