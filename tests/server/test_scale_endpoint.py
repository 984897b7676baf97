"""The scale webhook over the real server (``python -m webhook serve``, TLS): ``kubectl scale`` of a
PodClique to a count that makes a claim name too long is answered with a warning, or refused under
``--strict``; and a pod the mutating webhook patches carries the claims it added and is logged at
the default level (DECISIONS.md §3.3, DECISIONS.md §4)."""

from __future__ import annotations

import base64
from pathlib import Path

import orjson
import yaml
from server.serverproc import poll, serve

from core.pcs.test_scale import PCS, TEMPLATE, scale_review, spec
from core.workload import grove_pod, pod_review, workload_pcs_raw

SCALE = "/webhooks/validate-scale"
TOO_LONG = f'claim name "{PCS}-0-a-10-{TEMPLATE}"'


def objects(tmp_path: Path) -> Path:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all([spec(), workload_pcs_raw()]))
    return path


def test_kubectl_scale_past_the_tenth_replica_is_warned_about_and_denied_under_strict(tmp_path: Path) -> None:
    review = orjson.dumps(scale_review("podcliques", f"{PCS}-0-a", 11, old=2))
    fine = orjson.dumps(scale_review("podcliques", f"{PCS}-0-a", 10, old=2))
    with serve(tmp_path, "--objects", str(objects(tmp_path))) as served, served.client() as client:
        warned = client.post(SCALE, content=review).json()["response"]
        assert warned["allowed"] is True
        [warning] = warned["warnings"]
        assert warning.startswith(f"PodClique {PCS}-0-a at 11 replicas: {TOO_LONG}")
        assert "warnings" not in client.post(SCALE, content=fine).json()["response"]
    with serve(tmp_path / "strict", "--objects", str(objects(tmp_path)), "--strict") as served, served.client() as client:
        denied = client.post(SCALE, content=review).json()["response"]
        assert (denied["allowed"], denied["status"]["code"]) == (False, 403)
        assert TOO_LONG in denied["status"]["message"]


def test_a_patched_pod_records_its_claims_and_the_log_says_so_at_debug(tmp_path: Path) -> None:
    pod = orjson.dumps(pod_review(grove_pod(workload_pcs_raw(), 0, "worker-a", 0), uid="uid-pod"))
    with serve(tmp_path, "--objects", str(objects(tmp_path)), "--log-level", "debug") as served:
        with served.client() as client:
            answered = client.post("/webhooks/mutate-pod", content=pod).json()["response"]
        patch = orjson.loads(base64.b64decode(answered["patch"]))
        [annotation] = [op for op in patch if op["path"].startswith("/metadata/annotations")]
        recorded = "rs-test-all-int-tpl5,rs-test-0-ext-tpl,rs-test-0-int-tpl,rs-test-0-worker-a-all-ext-ns-tpl,rs-test-0-worker-a-0-int-tpl4"
        assert annotation["value"] == {"resource-sharing.grove.io/claims": recorded}
        poll(lambda: "webhook.server.decisions" in served.log_text(), "the decision line")
    [line] = [line for line in served.log_text().splitlines() if "webhook.server.decisions" in line]
    assert " DEBUG " in line and ": patched, code 200, " in line
    assert line.endswith(f"uid uid-pod: shared claims {recorded.replace(',', ', ')}")
