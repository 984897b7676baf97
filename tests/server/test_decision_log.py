"""One log line per admission decision: denials, errors, rejections and patches at INFO, the rest at DEBUG,
with the request's uid, webhook, operation, object, decision, status code and duration."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson
import pytest
from server.asgi import call
from server.memorystore import MemoryStore
from server.reviews import VALIDATE, WORKLOAD, bad_scope_pcs, body, review, workload_pcs
from server.serverproc import poll, serve

from core.workload import grove_pod, pod_review, workload_pcs_raw
from webhook import logs
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.server import app as server_app
from webhook.server.app import create_app
from webhook.settings import ServeSettings

MUTATE = "/webhooks/mutate-pod"
FIELDS = ("uid", "webhook", "operation", "object", "decision", "code")


def decided(caplog: pytest.LogCaptureFixture, path: str, content: bytes, level: int = logging.DEBUG) -> list[logging.LogRecord]:
    app = create_app(ServeSettings(), MemoryStore(read_podcliqueset(workload_pcs_raw())))
    caplog.clear()
    with caplog.at_level(level, logger=server_app.decisions.name):
        call(app, "POST", path, content)
    return [r for r in caplog.records if r.name == "webhook.server.decisions"]


def fields(record: logging.LogRecord) -> dict[str, Any]:
    return {name: getattr(record, name) for name in FIELDS}


def test_a_denial_is_logged_at_info_with_its_message(caplog: pytest.LogCaptureFixture) -> None:
    denied = review(bad_scope_pcs(), uid="uid-denied")
    [record] = decided(caplog, VALIDATE, body(denied), logging.INFO)
    assert record.levelno == logging.INFO
    assert fields(record) == {
        "uid": "uid-denied", "webhook": "validate-podcliqueset", "operation": "CREATE", "object": "default/rs-test",
        "decision": "denied", "code": 403,
    }
    assert record.detail.startswith("spec.template.resourceSharing[0].scope: Unsupported value")  # type: ignore[attr-defined]
    assert 0 < record.duration_ms < 10_000  # type: ignore[attr-defined]
    assert record.getMessage().startswith(
        "validate-podcliqueset CREATE default/rs-test: denied, code 403, "
    )
    assert ", uid uid-denied: spec.template.resourceSharing[0].scope: Unsupported value" in record.getMessage()


def test_allowed_is_logged_at_debug_only(caplog: pytest.LogCaptureFixture) -> None:
    [allowed] = decided(caplog, VALIDATE, body(review(workload_pcs(), uid="uid-allowed")))
    assert (allowed.levelno, allowed.decision, allowed.code, hasattr(allowed, "detail")) == (logging.DEBUG, "allowed", 200, False)  # type: ignore[attr-defined]
    assert decided(caplog, VALIDATE, body(review(workload_pcs(), uid="uid-allowed")), logging.INFO) == []


def test_a_patched_pod_is_logged_at_debug_with_the_claims_it_gets(caplog: pytest.LogCaptureFixture) -> None:
    """DECISIONS.md §2.2: a busy cluster patches a pod per Grove pod created."""
    pod = orjson.dumps(pod_review(grove_pod(workload_pcs_raw(), 0, "worker-a", 0), uid="uid-pod"))
    assert decided(caplog, MUTATE, pod, logging.INFO) == []
    [patched] = decided(caplog, MUTATE, pod, logging.DEBUG)
    assert fields(patched) == {
        "uid": "uid-pod", "webhook": "mutate-pod", "operation": "CREATE", "object": "default/",
        "decision": "patched", "code": 200,
    }
    assert patched.levelno == logging.DEBUG
    assert patched.getMessage().endswith(
        ", uid uid-pod: shared claims rs-test-all-int-tpl5, rs-test-0-ext-tpl, rs-test-0-int-tpl, "
        "rs-test-0-worker-a-all-ext-ns-tpl, rs-test-0-worker-a-0-int-tpl4"
    )


def test_a_rejected_body_is_logged_at_info_with_an_unknown_operation(caplog: pytest.LogCaptureFixture) -> None:
    [record] = decided(caplog, MUTATE, b"{not json", logging.INFO)
    assert fields(record) == {
        "uid": "", "webhook": "mutate-pod", "operation": "unknown", "object": "", "decision": "rejected", "code": 400,
    }
    assert record.getMessage().startswith("mutate-pod unknown: rejected, code 400, ")
    assert record.getMessage().endswith(" ms: request body is not valid JSON: unexpected character, expected a string key: line 1 column 2 (char 1)")


def test_nothing_is_built_for_a_line_that_is_not_written(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    monkeypatch.setattr(server_app, "fields", lambda webhook, decision, seconds: built.append(decision.outcome))
    decided(caplog, VALIDATE, body(review(workload_pcs())), logging.INFO)
    assert built == []


def test_json_lines_carry_the_decision_as_fields(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("info", "json")
    app = create_app(ServeSettings(), MemoryStore())
    call(app, "POST", VALIDATE, body(review(bad_scope_pcs(), uid="uid-json")))
    lines = [orjson.loads(line) for line in capsys.readouterr().err.splitlines()]
    [entry] = [e for e in lines if e["logger"].startswith("webhook.")]
    assert {k: entry[k] for k in ("level", "logger", *FIELDS)} == {
        "level": "info", "logger": "webhook.server.decisions", "uid": "uid-json", "webhook": "validate-podcliqueset",
        "operation": "CREATE", "object": "default/rs-test", "decision": "denied", "code": 403,
    }
    assert isinstance(entry["duration_ms"], float)
    assert entry["detail"].startswith("spec.template.resourceSharing[0].scope: ")


def test_text_logs_show_a_forged_line_escaped_and_a_long_uid_cut(tmp_path: Path) -> None:
    """A request's name that carries a newline and a log line of its own, and a uid of 200 KB: the
    served decision's text line stays one line of bounded length."""
    forged = "rs-test\n2026-01-01 00:00:00,000 ERROR webhook.server.tls: forged"
    denied = review(bad_scope_pcs(), uid="u" * 200_000)
    denied["request"]["name"] = forged
    with serve(tmp_path, "--objects", str(WORKLOAD), "--log-format", "text") as served:
        with served.client() as client:
            response = client.post(VALIDATE, content=body(denied))
        assert (response.status_code, response.json()["response"]["allowed"]) == (200, False)
        assert response.json()["response"]["uid"] == "u" * 200_000
        # Written after the answer went out: waited for before the server is killed.
        poll(lambda: " webhook.server.decisions: " in served.log_text(), "the decision line")
    lines = served.log_text().splitlines()
    [line] = [line for line in lines if " webhook.server.decisions: " in line]
    assert " INFO webhook.server.decisions: validate-podcliqueset CREATE default/rs-test\\n2026-01-01 00:00:00,000 ERROR webhook.server.tls: forged: denied, code 403, " in line
    assert f", uid {'u' * 256}...(199744 more characters): spec.template.resourceSharing[0].scope: " in line
    assert len(line) < 2000
    assert not [line for line in lines if line.startswith("2026-01-01")]
