"""POST /webhooks/mutate-pod: the patch a Grove pod gets, the pods left alone, the store lookup and
the metrics, through the app with the embedded store ``make run`` uses."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import jsonpatch
import orjson
import pytest
from core.workload import grove_pod, pod_review, workload_pcs, workload_pcs_raw
from prometheus_client.parser import text_string_to_metric_families

from server.asgi import call
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

MUTATE = "/webhooks/mutate-pod"
OBJECTS = Path(__file__).resolve().parents[2] / "examples" / "objects"
UID = "7f0b2c4e-0001"
WORKER_A = [
    "rs-test-all-int-tpl5",
    "rs-test-0-ext-tpl",
    "rs-test-0-int-tpl",
    "rs-test-0-worker-a-all-ext-ns-tpl",
    "rs-test-0-worker-a-0-int-tpl4",
]


class CountingStore(EmbeddedStore):
    """The embedded store, counting lookups; ``fetch`` finds what ``behind`` holds (a cluster's GET)."""

    def __init__(self, *cached: PodCliqueSet, behind: tuple[PodCliqueSet, ...] = ()) -> None:
        super().__init__()
        self._objects = {pcs.key: pcs for pcs in cached}
        self._behind = {pcs.key: pcs for pcs in behind}
        self._ready = True
        self.gets: list[tuple[str, str]] = []
        self.fetches: list[tuple[str, str]] = []

    def get(self, namespace: str, name: str) -> PodCliqueSet | None:
        self.gets.append((namespace, name))
        return super().get(namespace, name)

    async def fetch(self, namespace: str, name: str) -> PodCliqueSet | None:
        self.fetches.append((namespace, name))
        return self._behind.get((namespace, name))


def loaded_store() -> EmbeddedStore:
    store = EmbeddedStore([OBJECTS])
    store.load()
    return store


def post(app: Any, content: bytes) -> tuple[int, Any]:
    response = call(app, "POST", MUTATE, content)
    assert response.headers["content-type"] == "application/json"
    return response.status_code, response.json()


def mutated(pod: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    response = answer["response"]
    assert (response["uid"], response["allowed"], response["patchType"]) == (UID, True, "JSONPatch")
    return jsonpatch.apply_patch(pod, orjson.loads(base64.b64decode(response["patch"])))


def test_a_grove_pod_gets_its_claims_from_the_example_objects() -> None:
    pod = grove_pod(workload_pcs_raw(), 0, "worker-a", 0)
    status, answer = post(create_app(ServeSettings(), loaded_store()), orjson.dumps(pod_review(pod)))
    assert status == 200
    after = mutated(pod, answer)
    assert [c["name"] for c in after["spec"]["resourceClaims"]] == WORKER_A
    assert [c["name"] for c in after["spec"]["containers"][0]["resources"]["claims"]] == WORKER_A


@pytest.mark.parametrize(
    ("pod", "settings", "response"),
    [
        pytest.param(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"app": "web"}}},
            {},
            {"uid": UID, "allowed": True, "status": {"code": 200}},
            id="non-grove-pod-untouched",
        ),
        pytest.param(
            grove_pod(workload_pcs_raw(namespace="team-b"), 0, "worker-a", 0),
            {},
            {
                "uid": UID,
                "allowed": False,
                "status": {
                    "code": 403,
                    "reason": "Forbidden",
                    "message": "PodCliqueSet team-b/rs-test (label app.kubernetes.io/part-of of the pod) not found: "
                    "the pod's shared ResourceClaims cannot be determined",
                },
            },
            id="unknown-podcliqueset-denied",
        ),
        pytest.param(
            grove_pod(workload_pcs_raw(namespace="team-b"), 0, "worker-a", 0),
            {"on_missing_pcs": "allow"},
            {
                "uid": UID,
                "allowed": True,
                "status": {"code": 200},
                "warnings": [
                    "PodCliqueSet team-b/rs-test (label app.kubernetes.io/part-of of the pod) not found: "
                    "pod admitted without shared ResourceClaims"
                ],
            },
            id="unknown-podcliqueset-allowed-with-warning",
        ),
    ],
)
def test_answers(pod: dict[str, Any], settings: dict[str, Any], response: dict[str, Any]) -> None:
    status, answer = post(create_app(ServeSettings(**settings), loaded_store()), orjson.dumps(pod_review(pod)))
    assert (status, answer) == (200, {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})


@pytest.mark.parametrize(
    ("content", "error"),
    [
        pytest.param(b"{", "request body is not valid JSON: ", id="not-json"),
        pytest.param(b'{"request": {}}', "AdmissionReview request has no uid", id="no-uid"),
    ],
)
def test_unusable_bodies_get_400(content: bytes, error: str) -> None:
    status, answer = post(create_app(ServeSettings(), loaded_store()), content)
    assert status == 400
    assert answer["error"].startswith(error)


def test_the_store_is_read_once_and_fetched_only_on_a_miss() -> None:
    pod = grove_pod(workload_pcs_raw(), 0, "worker-a", 0)
    cached = CountingStore(workload_pcs())
    post(create_app(ServeSettings(), cached), orjson.dumps(pod_review(pod)))
    assert (cached.gets, cached.fetches) == ([("default", "rs-test")], [])

    behind = CountingStore(behind=(workload_pcs(),))
    status, answer = post(create_app(ServeSettings(), behind), orjson.dumps(pod_review(pod)))
    assert (behind.gets, behind.fetches) == ([("default", "rs-test")], [("default", "rs-test")])
    assert [c["name"] for c in mutated(pod, answer)["spec"]["resourceClaims"]] == WORKER_A


def test_pods_needing_no_podcliqueset_never_touch_the_store() -> None:
    store = CountingStore()
    app = create_app(ServeSettings(), store)
    post(app, orjson.dumps(pod_review({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"app": "web"}}})))
    post(app, orjson.dumps(pod_review(grove_pod(workload_pcs_raw(), 0, "worker-a", 0), "UPDATE")))
    assert (store.gets, store.fetches) == ([], [])


def test_metrics_count_mutations_by_decision() -> None:
    app = create_app(ServeSettings(), loaded_store())
    grove = grove_pod(workload_pcs_raw(), 0, "worker-a", 0)
    post(app, orjson.dumps(pod_review(grove)))
    post(app, orjson.dumps(pod_review(grove_pod(workload_pcs_raw(namespace="team-b"), 0, "worker-a", 0))))
    post(app, orjson.dumps(pod_review({"apiVersion": "v1", "kind": "Pod", "metadata": {}})))
    post(app, orjson.dumps(pod_review(grove, "DELETE")))
    post(app, b"{")
    found = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(call(app, "GET", "/metrics").text)
        for s in family.samples
    }
    webhook = ("webhook", "mutate-pod")
    requests = "webhook_requests_total"
    assert found[(requests, (("decision", "patched"), ("operation", "CREATE"), webhook))] == 1
    assert found[(requests, (("decision", "denied"), ("operation", "CREATE"), webhook))] == 1
    assert found[(requests, (("decision", "allowed"), ("operation", "CREATE"), webhook))] == 1
    assert found[(requests, (("decision", "allowed"), ("operation", "DELETE"), webhook))] == 1
    assert found[(requests, (("decision", "rejected"), ("operation", "unknown"), webhook))] == 1
    assert found[("webhook_request_duration_seconds_count", (webhook,))] == 5
    assert found[("webhook_store_objects", ())] == 1
