"""``webhook review``: the server's decision offline, with exit codes scripts can branch on."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml

from webhook.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "admission"
from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server.reviews import (  # noqa: E402
    BAD_SCOPE_MESSAGE,
    VALIDATE,
    WORKLOAD,
    bad_scope_pcs,
    body,
    review,
    workload_pcs,
)


def server_answer(content: bytes) -> bytes:
    import asyncio

    async def post() -> bytes:
        app = create_app(ServeSettings(), EmbeddedStore.of([]))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="https://webhook.test") as client:
            return (await client.post(VALIDATE, content=content)).content

    return asyncio.run(post())


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "review.json"
    path.write_bytes(data if isinstance(data, bytes) else body(data))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["review", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def long_names_pcs() -> dict[str, Any]:
    pcs = workload_pcs()
    pcs["metadata"]["name"] = "rs-test-with-a-name-too-long-for-the-claims-it-shares"
    return pcs


@pytest.mark.parametrize(
    ("data", "argv", "exit_code"),
    [
        pytest.param(review(workload_pcs()), [], 0, id="allowed"),
        pytest.param(review(bad_scope_pcs()), [], 1, id="denied"),
        pytest.param(review(operation="DELETE"), [], 0, id="delete-allowed"),
        pytest.param(review(long_names_pcs()), [], 0, id="warnings-allowed"),
        pytest.param(review(long_names_pcs()), ["--strict"], 1, id="warnings-denied-under-strict"),
        pytest.param(review(workload_pcs(), api_version="admission.k8s.io/v1beta1"), [], 0, id="v1beta1"),
    ],
)
def test_prints_what_the_server_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: Any, argv: list[str], exit_code: int
) -> None:
    code, out, err = run(capsys, str(write(tmp_path, data)), *argv)
    assert (code, err) == (exit_code, "")
    if not argv:
        assert out.encode() == server_answer(body(data)) + b"\n"


def test_reads_standard_input(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(body(review(bad_scope_pcs())))))
    code, out, _ = run(capsys, "-")
    assert code == 1
    assert orjson.loads(out)["response"]["status"]["message"] == BAD_SCOPE_MESSAGE


def test_objects_option_loads_manifests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, str(write(tmp_path, review(workload_pcs()))), "--objects", str(WORKLOAD))[0] == 0


@pytest.mark.parametrize(
    ("data", "error"),
    [
        pytest.param(b"{not json", "{file} is not an AdmissionReview: not valid JSON (unexpected character, expected a string key: line 1 column 2 (char 1))", id="not-json"),
        pytest.param(b"kind: PodCliqueSet\n", "{file} is not an AdmissionReview: not valid JSON (", id="yaml"),
        pytest.param(b"", "{file} is not an AdmissionReview: it is empty", id="empty"),
        pytest.param(b"[]", "{file} is not an AdmissionReview: a JSON array, not an object", id="json-array"),
        pytest.param(body({"request": {"operation": "CREATE"}}), "AdmissionReview request has no uid", id="no-uid"),
        pytest.param(
            body(review({"kind": "Deployment"}, kind={"group": "apps", "version": "v1", "kind": "Deployment"})),
            "no webhook decides kind 'Deployment'",
            id="kind-without-webhook",
        ),
    ],
)
def test_unusable_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, error: str) -> None:
    code, out, err = run(capsys, str(write(tmp_path, data)))
    assert (code, out) == (2, "")
    assert err.startswith("webhook review: error: ")
    assert error.format(file=tmp_path / "review.json") in err
    assert err.count("\n") == 1


def test_an_undecodable_object_prints_the_answer_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pcs = workload_pcs()
    pcs["spec"]["replicas"] = "two"
    code, out, err = run(capsys, str(write(tmp_path, review(pcs))))
    assert code == 2
    assert orjson.loads(out)["response"]["status"]["code"] == 400
    assert err.startswith(f"webhook review: error: {tmp_path / 'review.json'}: cannot decode request.object as grove.io/v1alpha1, Kind=PodCliqueSet")


def test_a_missing_file_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, str(tmp_path / "absent.json"))
    assert code == 2
    assert err == f"webhook review: error: cannot read {tmp_path / 'absent.json'}: No such file or directory\n"


def test_a_message_quoting_a_line_break_stays_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A label key is part of the path a decode error names; one holding a line break made two lines."""
    pcs = workload_pcs()
    pcs["metadata"]["labels"] = {"a\nb": 1}
    code, out, err = run(capsys, str(write(tmp_path, review(pcs))))
    assert code == 2
    assert orjson.loads(out)["response"]["status"]["message"].endswith("metadata.labels.a\nb: Input should be a valid string")
    assert err == f"webhook review: error: {tmp_path / 'review.json'}: cannot decode request.object as grove.io/v1alpha1, Kind=PodCliqueSet: metadata.labels.a\\nb: Input should be a valid string\n"


def test_an_internal_error_prints_the_servers_answer_and_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in a decision ended the command with a traceback; it is answered as the server answers it."""

    def broken(self: Any, pcs: Any) -> Any:
        raise RuntimeError("bug\nin two lines")

    monkeypatch.setattr("webhook.core.pcs.validator.PodCliqueSetValidator.validate", broken)
    code, out, err = run(capsys, str(write(tmp_path, review(workload_pcs()))))
    assert code == 2
    assert orjson.loads(out)["response"] == {
        "uid": review()["request"]["uid"],
        "allowed": False,
        "status": {"code": 500, "message": "internal error in the validate-podcliqueset webhook; the server log has the details"},
    }
    assert err == (
        f"webhook review: error: {tmp_path / 'review.json'}: internal error in the validate-podcliqueset webhook: "
        "RuntimeError: bug\\nin two lines\n"
    )


def test_the_claim_limit_is_an_option_and_a_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(write(tmp_path, review(workload_pcs())))
    code, out, _ = run(capsys, path, "--max-claims-per-owner", "1")
    warnings = orjson.loads(out)["response"]["warnings"]
    assert code == 0
    assert warnings[0].startswith("spec.template.resourceSharing: PodCliqueSet rs-test needs ")
    assert warnings[0].endswith("more than the limit of 1 (--max-claims-per-owner): only the first 1 are created")
    monkeypatch.setenv("WEBHOOK_MAX_CLAIMS_PER_OWNER", "1")
    assert run(capsys, path) == (0, out, "")
    monkeypatch.setenv("WEBHOOK_MAX_CLAIMS_PER_OWNER", "0")
    code, _, err = run(capsys, path)
    assert code == 2 and err.count("\n") == 1 and "max-claims-per-owner" in err.replace("_", "-").lower()


def test_output_yaml_is_the_same_answer_to_read(capsys: pytest.CaptureFixture[str]) -> None:
    example = str(EXAMPLES / "pcs-create-f2-filter-clique-not-found.json")
    assert main(["review", example]) == 1
    as_json = orjson.loads(capsys.readouterr().out)
    assert main(["review", "-o", "yaml", example]) == 1
    assert yaml.safe_load(capsys.readouterr().out) == as_json
