"""The real server: ``python -m webhook serve`` over TLS on loopback, verified with its own CA."""

from __future__ import annotations

import copy
import socket
from pathlib import Path
from typing import Any

import orjson
import pytest
from core.workload import grove_pod, pod_review, workload_pcs_raw
from prometheus_client.parser import text_string_to_metric_families
from server.reviews import BAD_SCOPE_MESSAGE, VALIDATE, WORKLOAD, bad_scope_pcs, body, review, workload_pcs
from server.serverproc import Served, free_port, serve

from webhook.cli import main

HEADERS = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Served:
    with serve(tmp_path_factory.mktemp("tls"), "--objects", str(WORKLOAD.parent)) as served:
        yield served  # type: ignore[misc]


def test_a_valid_create_is_allowed_and_a_bad_scope_denied(server: Served) -> None:
    with server.client() as client:
        allowed = client.post(VALIDATE, content=body(review(workload_pcs())), headers=HEADERS)
        denied = client.post(VALIDATE, content=body(review(bad_scope_pcs())), headers=HEADERS)
    assert allowed.status_code == 200
    assert allowed.json()["response"] == {"uid": review()["request"]["uid"], "allowed": True, "status": {"code": 200}}
    assert denied.status_code == 200
    assert denied.json()["response"]["status"] == {"code": 403, "reason": "Forbidden", "message": BAD_SCOPE_MESSAGE}


def test_requests_reuse_one_kept_alive_connection(server: Served) -> None:
    local_ports = set()
    with server.client() as client:
        for _ in range(5):
            response = client.post(VALIDATE, content=body(review(workload_pcs())), headers=HEADERS)
            assert response.status_code == 200
            local_ports.add(response.extensions["network_stream"].get_extra_info("client_addr")[1])
    assert len(local_ports) == 1


def test_probes(server: Served) -> None:
    with server.client() as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        ready = client.get("/readyz")
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})


def test_metrics_after_requests(server: Served) -> None:
    with server.client() as client:
        client.post(VALIDATE, content=body(review(bad_scope_pcs())), headers=HEADERS)
        text = client.get("/metrics").text
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(text) for s in f.samples
    }
    denied = ("webhook_requests_total", (("decision", "denied"), ("operation", "CREATE"), ("webhook", "validate-podcliqueset")))
    assert samples[denied] >= 1
    assert samples[("webhook_request_duration_seconds_count", (("webhook", "validate-podcliqueset"),))] >= 1
    assert samples[("webhook_store_objects", ())] == 1
    assert samples[("webhook_store_synced", ())] == 1


MUTATE = "/webhooks/mutate-pod"


def with_parameters(pcs: dict[str, Any]) -> dict[str, Any]:
    pcs = copy.deepcopy(pcs)
    for template in pcs["spec"]["template"]["resourceClaimTemplates"]:
        template["templateSpec"]["spec"]["devices"]["config"] = [{"opaque": {"driver": "gpu.example.com", "parameters": "DEEP"}}]
    return pcs


def configmap(labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rs-test", "namespace": "default", "labels": labels}}


def configmap_pod_review() -> bytes:
    """A Pod review whose object is a ConfigMap carrying a Grove pod's labels (it was patched)."""
    pod = grove_pod(workload_pcs_raw(), 0, "worker-a", 0)
    document = pod_review(pod)
    document["request"]["object"] = configmap(pod["metadata"]["labels"])
    return orjson.dumps(document)


@pytest.mark.parametrize(
    ("path", "content", "message"),
    [
        pytest.param(
            VALIDATE,
            body(review(workload_pcs(), operation="UPDATE", old=with_parameters(workload_pcs()))).replace(b'"DEEP"', b"[" * 300 + b"]" * 300),
            "cannot decode request.oldObject as grove.io/v1alpha1, Kind=PodCliqueSet: spec.template.resourceClaimTemplates[0]"
            ".templateSpec.spec.devices.config[0].opaque.parameters: nested more than 100 levels deep",
            id="old-object-parameters-nested-300-levels",
        ),
        pytest.param(
            VALIDATE,
            body(review(configmap({}))),
            "unable to decode v1, Kind=ConfigMap into grove.io/v1alpha1, Kind=PodCliqueSet",
            id="a-configmap-as-a-podcliqueset",
        ),
        pytest.param(
            MUTATE,
            configmap_pod_review(),
            "unable to decode v1, Kind=ConfigMap into v1, Kind=Pod",
            id="a-configmap-with-groves-labels-as-a-pod",
        ),
    ],
)
def test_objects_nested_deep_or_of_another_kind_are_answered_with_code_400(
    server: Served, path: str, content: bytes, message: str
) -> None:
    with server.client() as client:
        response = client.post(path, content=content, headers=HEADERS)
    answer = response.json()["response"]
    assert (response.status_code, answer["allowed"], answer["status"]) == (200, False, {"code": 400, "message": message})
    assert "patch" not in answer


def test_a_port_in_use_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certs", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["serve", "--port", str(port), "--tls-cert", str(tmp_path / "tls.crt"), "--tls-key", str(tmp_path / "tls.key")])
    assert code == 1
    assert capsys.readouterr().err == f"webhook serve: error: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_an_unparsable_manifest_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certs", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    manifest = tmp_path / "broken.yaml"
    manifest.write_text("kind: PodCliqueSet\nmetadata: [unclosed\n")
    code = main(
        ["serve", "--port", str(free_port()), "--tls-cert", str(tmp_path / "tls.crt"), "--tls-key", str(tmp_path / "tls.key"), "--objects", str(manifest)]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith(f"webhook serve: error: {manifest}")
    assert err.count("\n") == 1
