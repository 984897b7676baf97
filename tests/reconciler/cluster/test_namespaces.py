"""``reconcile --namespace a --namespace b``, as ``serve --namespace`` means it: the PodCliqueSets of
those namespaces get their claims, those of any other namespace are not even seen."""

from __future__ import annotations

import pytest
from fakeapi import FakeApiServer, wait_until

from reconciler.conftest import Start
from reconciler.objects import podcliqueset

SHARING = [{"name": "gpu", "scope": "AllReplicas"}]


def claims(fake_api: FakeApiServer, namespace: str) -> list[str]:
    return sorted(c["metadata"]["name"] for c in fake_api.list("resourceclaims", namespace))


@pytest.mark.parametrize("given", [{"namespace": ["team-a", "team-b"]}, {"namespace": "team-a,team-b"}], ids=["repeated", "comma-separated"])
def test_the_namespaces_given_are_reconciled_and_no_other(fake_api: FakeApiServer, start_reconciler: Start,
                                                          given: dict[str, object]) -> None:
    running = start_reconciler(**given)
    running.wait_active()
    for namespace in ("team-a", "team-b", "team-c"):
        fake_api.create(podcliqueset("solo", SHARING, namespace=namespace))
    wait_until(lambda: claims(fake_api, "team-a") == claims(fake_api, "team-b") == ["solo-all-gpu"],
               message="the claims of both namespaces made")
    assert claims(fake_api, "team-c") == []
    assert sorted(running.controller.caches.pcs_keys()) == [("team-a", "solo"), ("team-b", "solo")]
