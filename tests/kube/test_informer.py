"""The list+watch informer against the fake API server, through the official client."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fakeapi import CuttableProxy, FakeApiServer, new_api_client, wait_until
from kubernetes import client as k8s_client

from webhook.kube.api import PODCLIQUES, RESOURCECLAIMS
from webhook.kube.informer import Informer

NS = "team-a"


def clique(name: str, namespace: str = NS, replicas: int = 1, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodClique",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"replicas": replicas},
    }


class Recorder:
    """The handler's calls, as (event type, namespace/name) in arrival order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, kind: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        with self._lock:
            self.calls.append((kind, f"{meta['namespace']}/{meta['name']}"))

    def seen(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self.calls)


@pytest.fixture
def started(kube_api_client: Any):  # type: ignore[no-untyped-def]
    informers: list[Informer[Any]] = []

    def start(**kwargs: Any) -> Informer[Any]:
        informer: Informer[Any] = Informer(kube_api_client, kwargs.pop("resource", PODCLIQUES), **kwargs)
        informer.start()
        informers.append(informer)
        wait_until(lambda: informer.synced, message="informer synced")
        return informer

    yield start
    for informer in informers:
        informer.stop()


def names(informer: Informer[Any]) -> list[str]:
    return sorted(obj["metadata"]["name"] for obj in informer.list())


def test_initial_list_fills_the_cache_and_tells_the_handler(fake_api: FakeApiServer, started: Any) -> None:
    fake_api.create(clique("a"))
    fake_api.create(clique("b", namespace="other"))
    recorder = Recorder()

    informer = started(handler=recorder)

    assert names(informer) == ["a", "b"]
    assert informer.get(NS, "a")["spec"] == {"replicas": 1}
    assert informer.get(NS, "b") is None
    assert sorted(recorder.seen()) == [("ADDED", "other/b"), ("ADDED", "team-a/a")]
    assert fake_api.requests.count("GET", "podcliques", watch=False) == 1


def test_the_first_list_comes_in_pages_of_500_and_the_watch_starts_from_its_version(
    fake_api: FakeApiServer, started: Any
) -> None:
    for i in range(1_201):
        fake_api.create(clique(f"c{i:04d}"))
    recorder = Recorder()

    informer = started(handler=recorder)

    assert len(informer) == 1_201 and len(recorder.seen()) == 1_201
    lists = fake_api.requests.matching("GET", "podcliques", watch=False)
    assert [r.params.get("limit") for r in lists] == ["500"] * 3
    assert ["continue" in r.params for r in lists] == [False, True, True]
    fake_api.create(clique("after"))
    wait_until(lambda: informer.get(NS, "after") is not None, message="the watch delivers what follows the list")


@pytest.mark.parametrize(
    ("namespace", "selector", "expected"),
    [
        (NS, None, ["a", "c", "e", "f"]),
        (None, "tier=db", ["b", "c", "f"]),
        (NS, "tier in (db)", ["c", "f"]),
    ],
    ids=["namespace", "label-selector", "both"],
)
def test_namespace_and_label_selector_limit_what_is_cached(
    fake_api: FakeApiServer, started: Any, namespace: str | None, selector: str | None, expected: list[str]
) -> None:
    fake_api.create(clique("a"))
    fake_api.create(clique("b", namespace="other", tier="db"))
    fake_api.create(clique("c", tier="db"))

    informer = started(namespace=namespace, label_selector=selector)
    fake_api.create(clique("d", namespace="other"))
    fake_api.create(clique("e", tier="web"))
    fake_api.create(clique("f", tier="db"))

    wait_until(lambda: names(informer) == expected, message=f"cache holds {expected}")


def test_watch_events_reach_cache_and_handler_in_order(fake_api: FakeApiServer, started: Any) -> None:
    recorder = Recorder()
    informer = started(handler=recorder)

    fake_api.create(clique("a"))
    fake_api.patch("podcliques", NS, "a", {"spec": {"replicas": 3}})
    fake_api.create(clique("b"))
    fake_api.delete("podcliques", NS, "a")

    expected = [("ADDED", "team-a/a"), ("MODIFIED", "team-a/a"), ("ADDED", "team-a/b"), ("DELETED", "team-a/a")]
    wait_until(lambda: recorder.seen() == expected, message="events in order")
    assert names(informer) == ["b"]


def forget_while_disconnected(fake_api: FakeApiServer, *changes: Any) -> None:
    """End the open watches, make ``changes`` and drop the history, all before a watch can resume:
    the informer's resume gets 410 Gone and only a re-list can tell it what happened."""
    with fake_api.store.lock:
        fake_api.expire_watches()
        for change in changes:
            change()
        fake_api.compact()


def test_an_expired_watch_relists_and_reports_what_changed_meanwhile(fake_api: FakeApiServer, started: Any) -> None:
    fake_api.create(clique("kept"))
    fake_api.create(clique("changed"))
    fake_api.create(clique("removed", **{"app.kubernetes.io/part-of": "pcs"}))
    seen: list[tuple[str, str, dict[str, str]]] = []
    informer = started(handler=lambda kind, obj: seen.append((kind, obj["metadata"]["name"], obj["metadata"]["labels"])))
    seen.clear()

    forget_while_disconnected(
        fake_api,
        lambda: fake_api.patch("podcliques", NS, "changed", {"spec": {"replicas": 2}}),
        lambda: fake_api.delete("podcliques", NS, "removed"),
        lambda: fake_api.create(clique("added")),
    )

    wait_until(lambda: len(seen) == 3, message="what a second list after 410 found")
    assert names(informer) == ["added", "changed", "kept"]
    assert informer.get(NS, "changed")["spec"] == {"replicas": 2}
    # A deletion found by the re-list carries the object's last labels, so a handler can still
    # tell what it belonged to.
    assert sorted(seen) == [
        ("ADDED", "added", {}),
        ("DELETED", "removed", {"app.kubernetes.io/part-of": "pcs"}),
        ("MODIFIED", "changed", {}),
    ]


def test_a_410_answer_to_the_watch_request_relists(fake_api: FakeApiServer, started: Any) -> None:
    fake_api.create(clique("a"))
    informer = started()
    fake_api.fail_next("GET", "podcliques", 410, "Expired", query_regex="watch=true")
    fake_api.expire_watches()

    wait_until(lambda: fake_api.requests.count("GET", "/podcliques$", watch=False) == 2, message="re-list after a 410 answer")
    fake_api.patch("podcliques", NS, "a", {"spec": {"replicas": 2}})
    wait_until(lambda: informer.get(NS, "a")["spec"] == {"replicas": 2}, message="watch resumed")


def test_transform_rejects_are_left_out(fake_api: FakeApiServer, started: Any) -> None:
    def transform(obj: dict[str, Any]) -> str:
        if obj["spec"]["replicas"] < 0:
            raise ValueError("negative replicas")
        return obj["metadata"]["name"]

    fake_api.create(clique("good"))
    fake_api.create(clique("bad", replicas=-1))
    informer = started(transform=transform)

    assert informer.list() == ["good"]
    fake_api.patch("podcliques", NS, "good", {"spec": {"replicas": -2}})
    wait_until(lambda: informer.list() == [], message="a rejected update removes the object")


def test_claims_are_listed_and_watched_as_plain_dicts(fake_api: FakeApiServer, started: Any) -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": NS, "labels": {"app.kubernetes.io/component": "resource-claim"}},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "x", "futureField": 1}}]}},
    }
    informer = started(resource=RESOURCECLAIMS, label_selector="app.kubernetes.io/component=resource-claim")
    fake_api.create(claim)
    wait_until(lambda: informer.get(NS, "c") is not None, message="claim cached")
    assert informer.get(NS, "c")["spec"] == claim["spec"]


def test_stop_is_prompt_with_a_watch_open(fake_api: FakeApiServer, started: Any) -> None:
    informer = started(watch_timeout_seconds=300)
    wait_until(lambda: fake_api.open_watches() == 1, message="watch open")
    began = time.monotonic()
    informer.stop()
    assert time.monotonic() - began < 1.0
    assert not informer._thread.is_alive()  # type: ignore[union-attr]


def test_stop_when_the_watch_connection_just_closed_itself(fake_api: FakeApiServer, started: Any) -> None:
    """A watch the server has just ended has its socket closed by urllib3 before the informer
    forgets the response: shutting that socket down fails (EBADF), which must not stop the
    shutdown (a reconciler's SIGTERM ended in that traceback, rarely, at the end of a test)."""
    informer = started(watch_timeout_seconds=300)
    wait_until(lambda: fake_api.open_watches() == 1, message="watch open")
    response = informer._response
    shutdown = response.shutdown

    def closed_already() -> None:
        shutdown()  # the watch ends, as it had; its socket is then gone
        raise OSError(9, "Bad file descriptor")

    response.shutdown = closed_already
    informer.stop()
    wait_until(lambda: not informer._thread.is_alive(), message="informer thread ended")


def test_a_failing_list_is_retried(fake_api: FakeApiServer, kube_api_client: Any) -> None:
    fake_api.create(clique("a"))
    fake_api.fail_next("GET", "podcliques", 500, "InternalError", times=2)
    informer: Informer[Any] = Informer(kube_api_client, PODCLIQUES)
    informer.start()
    try:
        assert not informer.synced
        wait_until(lambda: informer.synced, message="informer synced")
        assert names(informer) == ["a"]
    finally:
        informer.stop()


def test_after_outages_the_informer_is_back_within_seconds_and_says_so_once(
    fake_api: FakeApiServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The retry delay starts at 0.2 s, doubles up to 2 s, and starts again from 0.2 s once a list
    or a watch works: three attempts take under 2 s in every outage, not only the first, and the
    cache is current within seconds of the server's return. One WARNING when an outage starts
    (the client's own retries are off, as the reconciler's are), one INFO when it ends."""
    caplog.set_level(logging.INFO, logger="webhook.kube.attempts")
    recovered: list[int] = []
    with CuttableProxy((fake_api.host, fake_api.port)) as proxy:
        configuration = new_api_client(proxy.write_kubeconfig(tmp_path / "kubeconfig")).configuration
        configuration.retries = False
        informer: Informer[Any] = Informer(
            k8s_client.ApiClient(configuration), PODCLIQUES, on_recovered=lambda: recovered.append(1)
        )
        informer.start()
        try:
            wait_until(lambda: informer.synced, message="informer synced")
            for outage in range(2):
                proxy.cut()
                fake_api.create(clique(f"during-{outage}"))
                wait_until(lambda: informer.attempts.failures >= 3, timeout=4, message=f"three attempts in outage {outage}")
                proxy.restore()
                wait_until(lambda: informer.get(NS, f"during-{outage}") is not None, timeout=4, message="back")
                assert len(recovered) == outage + 1
        finally:
            informer.stop()
    lines = [
        (r.levelname, r.getMessage().split(" (")[0].split(" after")[0])
        for r in caplog.records
        if r.name == "webhook.kube.attempts"
    ]
    assert lines == [
        ("WARNING", "list/watch of podcliques.grove.io failed"),
        ("INFO", "list/watch of podcliques.grove.io is back"),
    ] * 2
