"""Which store the settings choose: the cluster's watch cache, or the manifests of --objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from webhook.settings import ReviewSettings, ServeSettings
from webhook.stores import EmbeddedStore, build_store
from webhook.stores.cluster import ClusterStore

OBJECTS = [Path("examples/objects")]


@pytest.mark.parametrize(
    ("settings", "in_a_pod", "expected"),
    [
        (lambda: ServeSettings(objects=OBJECTS), False, EmbeddedStore),
        (lambda: ServeSettings(), False, EmbeddedStore),
        (lambda: ServeSettings(kubeconfig=Path("kubeconfig")), False, ClusterStore),
        (lambda: ServeSettings(), True, ClusterStore),
        (lambda: ServeSettings(objects=OBJECTS), True, EmbeddedStore),
        (lambda: ReviewSettings(file="-", objects=OBJECTS), True, EmbeddedStore),
    ],
    ids=["objects", "nothing", "kubeconfig", "in a pod", "objects in a pod", "review"],
)
def test_store_choice(monkeypatch: pytest.MonkeyPatch, settings, in_a_pod: bool, expected: type) -> None:  # type: ignore[no-untyped-def]
    if in_a_pod:
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    else:
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert type(build_store(settings())) is expected


def test_the_cluster_store_gets_kubeconfig_and_namespaces() -> None:
    store = build_store(ServeSettings(kubeconfig=Path("kc"), namespace=["team-a", "team-b"]))
    assert isinstance(store, ClusterStore)
    assert (store.kubeconfig, store.namespaces) == (Path("kc"), ["team-a", "team-b"])


def test_the_embedded_store_gets_the_paths() -> None:
    store = build_store(ServeSettings(objects=OBJECTS))
    assert isinstance(store, EmbeddedStore)
    assert store.paths == OBJECTS
