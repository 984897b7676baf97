"""``webhook review`` with Pod AdmissionReviews: the mutating webhook's answer offline, with the
PodCliqueSets of ``--objects``."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from server.asgi import call

from webhook.cli import main
from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

ROOT = Path(__file__).resolve().parents[2]
OBJECTS = ROOT / "examples" / "objects"
ADMISSION = ROOT / "examples" / "admission"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["review", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def server_answer(file: Path, **settings: str) -> bytes:
    store = EmbeddedStore([OBJECTS])
    store.load()
    return call(create_app(ServeSettings(**settings), store), "POST", "/webhooks/mutate-pod", file.read_bytes()).content


@pytest.mark.parametrize(
    ("example", "argv", "exit_code"),
    [
        pytest.param("pod-worker-a.json", [], 0, id="patched"),
        pytest.param("pod-init-containers.json", [], 0, id="patched-with-init-containers"),
        pytest.param("pod-not-grove.json", [], 0, id="not-grove-allowed"),
        pytest.param("pod-bad-labels.json", [], 1, id="label-error-denied"),
        pytest.param("pod-unknown-pcs.json", [], 1, id="unknown-podcliqueset-denied"),
        pytest.param("pod-unknown-pcs.json", ["--on-missing-pcs", "allow"], 0, id="unknown-podcliqueset-allowed"),
    ],
)
def test_prints_what_the_server_answers(capsys: pytest.CaptureFixture[str], example: str, argv: list[str], exit_code: int) -> None:
    file = ADMISSION / example
    code, out, err = run(capsys, str(file), "--objects", str(OBJECTS), *argv)
    assert (code, err) == (exit_code, "")
    settings = {"on_missing_pcs": argv[1]} if argv else {}
    assert out.encode() == server_answer(file, **settings) + b"\n"


def test_without_objects_a_grove_pod_has_no_podcliqueset(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(ADMISSION / "pod-worker-a.json"))
    assert code == 1
    assert orjson.loads(out)["response"]["status"]["message"].startswith("PodCliqueSet default/rs-test ")


def test_an_unparsable_manifest_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = tmp_path / "objects.yaml"
    manifest.write_text("apiVersion: grove.io/v1alpha1\nkind: PodCliqueSet\nmetadata: {name: [\n")
    code, out, err = run(capsys, str(ADMISSION / "pod-worker-a.json"), "--objects", str(manifest))
    assert (code, out) == (2, "")
    assert err.startswith(f"webhook review: error: {manifest}: document 1: not valid YAML: ")
    assert err.count("\n") == 1
