"""The cluster store against the fake API server, through the official client: list, watch,
re-list on 410, readiness, and the one bounded GET on a miss. Each test ends with the pod
webhook deciding with what the store holds, as the server's request path does."""

from __future__ import annotations

import asyncio
import base64
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from core.workload import grove_pod, pod_review, workload_pcs_raw
from fakeapi import FakeApiServer, wait_until
from kubernetes import client
from server.asgi import call

from webhook.core import admission
from webhook.core.pcs.authorization import User
from webhook.core.pod.mutator import PodMutator
from webhook.kube.access import ACCESS, Component
from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import StoreError
from webhook.stores.cluster import ClusterStore

Start = Callable[..., ClusterStore]
PCS_PATH = "/apis/grove.io/v1alpha1/namespaces/default/podcliquesets"


@pytest.fixture
def start(kubeconfig_path: Path) -> Iterator[Start]:
    stores: list[ClusterStore] = []

    def start_store(**kwargs: Any) -> ClusterStore:
        store = ClusterStore(kwargs.pop("kubeconfig", kubeconfig_path), **kwargs)
        asyncio.run(store.start())
        stores.append(store)
        return store

    yield start_store
    for store in stores:
        asyncio.run(store.stop())


def pcs(name: str = "rs-test", namespace: str = "default") -> dict[str, Any]:
    raw = workload_pcs_raw(namespace=namespace)
    raw["metadata"]["name"] = name
    return raw


def admit(store: ClusterStore, pod: dict[str, Any]) -> dict[str, Any]:
    """What the server does with a pod: read, store get, fetch on a miss, decide."""
    answer = asyncio.run(admission.answer(PodMutator(store), "mutate-pod", orjson.dumps(pod_review(pod))))
    return answer.body["response"]


def injected(answer: dict[str, Any]) -> list[str]:
    operations = orjson.loads(base64.b64decode(answer["patch"]))
    return [claim["name"] for claim in operations[0]["value"]]


WORKER_A = ["rs-test-all-int-tpl5", "rs-test-0-ext-tpl", "rs-test-0-int-tpl", "rs-test-0-worker-a-all-ext-ns-tpl",
            "rs-test-0-worker-a-0-int-tpl4"]


def test_not_ready_until_the_first_list_is_in(fake_api: FakeApiServer, start: Start) -> None:
    fake_api.create(pcs())
    fake_api.create(pcs("other", "team-a"))
    fake_api.fail_next("GET", "podcliquesets", 500, query_regex="^(?!.*watch=true)")

    store = start()

    assert not store.ready
    assert store.size == 0
    wait_until(lambda: store.ready, message="store synced after the failed list is retried")
    assert store.size == 2
    assert store.get("team-a", "other") is not None
    assert injected(admit(store, grove_pod(workload_pcs_raw(), 0, "worker-a", 0))) == WORKER_A


def test_a_watched_addition_is_used_by_the_next_admission(fake_api: FakeApiServer, start: Start) -> None:
    store = start()
    wait_until(lambda: store.ready, message="synced")
    pod = grove_pod(workload_pcs_raw(), 0, "worker-a", 0)
    fake_api.fail_next("GET", f"{PCS_PATH}/rs-test$")
    denied = admit(store, pod)
    assert denied["status"]["message"].startswith("PodCliqueSet default/rs-test ")

    fake_api.create(pcs())
    wait_until(lambda: store.get("default", "rs-test"), message="the watch delivers the PodCliqueSet")
    gets_before = fake_api.requests.count("GET", f"{PCS_PATH}/rs-test$")
    assert injected(admit(store, pod)) == WORKER_A
    assert fake_api.requests.count("GET", f"{PCS_PATH}/rs-test$") == gets_before


def test_an_expired_watch_is_resumed_by_a_relist(fake_api: FakeApiServer, start: Start) -> None:
    fake_api.create(pcs("old"))
    store = start()
    wait_until(lambda: store.ready, message="synced")
    # Keep the watch down while the PodCliqueSets change and the API server forgets its history:
    # resuming from the last resourceVersion then gets 410 Gone.
    outage = fake_api.fail_next("GET", "podcliquesets$", 503, "ServiceUnavailable", times=10_000, query_regex="watch=true")
    fake_api.expire_watches()
    wait_until(lambda: outage.hits, message="the watch is down")
    fake_api.delete("podcliquesets", "default", "old")
    fake_api.create(pcs())
    fake_api.compact()
    fake_api.faults.clear()

    wait_until(lambda: fake_api.requests.count("GET", "podcliquesets$", watch=False) == 2, message="a second list")
    wait_until(lambda: store.get("default", "rs-test") and not store.get("default", "old"), message="cache re-listed")
    assert store.ready
    assert injected(admit(store, grove_pod(workload_pcs_raw(), 0, "worker-a", 0))) == WORKER_A


def test_a_miss_makes_one_get(fake_api: FakeApiServer, start: Start) -> None:
    fake_api.fail_next("GET", "podcliquesets$", 500, times=10_000, query_regex="watch=true")
    store = start()
    wait_until(lambda: store.ready, message="synced")
    fake_api.create(pcs())
    assert store.get("default", "rs-test") is None

    assert injected(admit(store, grove_pod(workload_pcs_raw(), 0, "worker-a", 0))) == WORKER_A
    assert fake_api.requests.count("GET", f"{PCS_PATH}/rs-test$") == 1

    assert asyncio.run(store.fetch("default", "absent")) is None
    assert fake_api.requests.count("GET", f"{PCS_PATH}/absent$") == 1

    assert asyncio.run(store.fetch("default", "")) is None
    assert fake_api.requests.count("GET", f"^{PCS_PATH}/?$") == 0


def test_namespaces_outside_the_watched_ones_are_never_fetched(fake_api: FakeApiServer, start: Start) -> None:
    fake_api.create(pcs("a", "team-a"))
    fake_api.create(pcs("b", "team-b"))
    store = start(namespaces=["team-a"])
    wait_until(lambda: store.ready, message="synced")
    assert store.get("team-a", "a") is not None
    assert store.get("team-b", "b") is None
    assert asyncio.run(store.fetch("team-b", "b")) is None
    assert fake_api.requests.count("GET", "namespaces/team-b/") == 0


def test_an_unreadable_podcliqueset_is_left_out(fake_api: FakeApiServer, start: Start) -> None:
    bad = pcs("bad")
    bad["spec"]["replicas"] = "two"
    fake_api.create(bad)
    fake_api.create(pcs())
    store = start()
    wait_until(lambda: store.ready, message="synced")
    assert (store.size, store.get("default", "bad")) == (1, None)


class Silent:
    """A TCP listener on loopback that accepts connections and never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.connections: list[socket.socket] = []
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.connections.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept; close alone leaves it listening
        self.sock.close()
        for connection in self.connections:
            connection.close()


def test_the_get_on_a_miss_is_bounded_and_made_once() -> None:
    silent = Silent()
    configuration = client.Configuration()
    configuration.host = silent.url
    store = ClusterStore(api=client.ApiClient(configuration), fetch_timeout=0.2)
    try:
        asyncio.run(store.start())
        wait_until(lambda: silent.connections, message="the list is waiting")
        listed = len(silent.connections)
        began = time.monotonic()
        assert asyncio.run(store.fetch("default", "rs-test")) is None
        assert time.monotonic() - began < 1.0
        assert len(silent.connections) == listed + 1
        assert not store.ready
    finally:
        silent.close()
        asyncio.run(store.stop())


def test_a_bad_kubeconfig_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text("clusters: [")
    store = ClusterStore(path)
    with pytest.raises(StoreError) as raised:
        asyncio.run(store.start())
    assert str(raised.value).startswith(f"cannot load kubeconfig {path}: ")
    assert "\n" not in str(raised.value)


def test_the_server_is_ready_once_synced_and_mutates_with_watched_objects(fake_api: FakeApiServer, start: Start) -> None:
    # The lists fail until the server has been seen unready: a single failure is retried within
    # 0.2 s, which a loaded machine may take before the first probe.
    failing = fake_api.fail_next("GET", "podcliquesets", 500, times=1_000_000, query_regex="^(?!.*watch=true)")
    store = start()
    app = create_app(ServeSettings(), store)
    wait_until(lambda: failing.hits, message="a list failed")
    assert call(app, "GET", "/readyz").status_code == 503
    fake_api.faults.clear()

    wait_until(lambda: call(app, "GET", "/readyz").status_code == 200, message="ready after the first list")
    fake_api.create(pcs())
    wait_until(lambda: store.get("default", "rs-test"), message="the watch delivers the PodCliqueSet")
    pod = grove_pod(workload_pcs_raw(), 0, "worker-a", 0)
    answer = call(app, "POST", "/webhooks/mutate-pod", orjson.dumps(pod_review(pod))).json()["response"]
    assert injected(answer) == WORKER_A


def test_the_store_uses_exactly_the_webhooks_access_table(fake_api: FakeApiServer, start: Start) -> None:
    """The chart grants the webhook what its access table declares: list and watch (the cache), get
    (a miss), create of SubjectAccessReviews (templates of other namespaces) and get of
    ResourceClaimTemplates (do the external ones a CREATE names exist), and nothing else is ever
    sent."""
    store = start()
    wait_until(lambda: store.ready, message="synced")
    fake_api.create(pcs())
    wait_until(lambda: store.get("default", "rs-test") is not None, message="watched")
    assert asyncio.run(store.fetch("default", "absent")) is None
    assert asyncio.run(store.template_access().may_get(User("alice"), "shared", "gpu")) is False
    fake_api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                     "metadata": {"name": "gpu", "namespace": "shared"}, "spec": {"spec": {}}})
    assert asyncio.run(store.template_lookup().exists("shared", "gpu")) is True
    assert asyncio.run(store.template_lookup().exists("shared", "gpu-tempalte")) is False

    declared = {(r.resource.group, r.resource.plural, verb) for r in ACCESS[Component.WEBHOOK] for verb in r.verbs}
    assert set(store.access.calls) == declared
