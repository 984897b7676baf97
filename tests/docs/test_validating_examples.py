"""The PodCliqueSet examples and examples/README.md's "Validating webhook examples" say what the server does.

Every curl of that section is answered by the app ``make run`` serves, and once more by the real
``python -m webhook serve`` over TLS (with the command itself run as typed when curl and jq are
installed); ``python -m webhook review`` must print the same answers. The example files must be
what ``examples/generate_podcliquesets.py`` writes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from core.podcliquesets import generate
from server.asgi import call
from server.serverproc import Served, serve

from webhook.cli import main
from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

ROOT = Path(__file__).resolve().parents[2]
ADMISSION = ROOT / "examples" / "admission"
OBJECTS = ROOT / "examples" / "objects"
VALIDATE = "/webhooks/validate-podcliqueset"
URL = f"https://127.0.0.1:8443{VALIDATE}"
SECTION = ROOT.joinpath("examples", "README.md").read_text().partition("\n## Validating webhook examples\n")[2].partition("\n## ")[0]
EXAMPLE = re.compile(r"```sh\n(?P<command>curl .*?)\n```\s*```json\n(?P<output>.*?)\n```", re.S)
FILTERS = {"| jq .response": lambda body: body["response"], "| jq .": lambda body: body}


def documented() -> list[tuple[str, str, str, Any]]:
    """(example file, command as typed, jq filter, shown output) of each curl in the section."""
    found = []
    for match in EXAMPLE.finditer(SECTION):
        command = match["command"]
        flat = command.replace("\\\n", " ")
        file = re.search(r"--data-binary @examples/admission/(\S+)", flat)
        assert file, f"no example file in {command!r}"
        assert URL in flat and "--cacert certs/ca.crt" in flat, command
        tail = next(f for f in FILTERS if flat.rstrip().endswith(f))
        found.append((file[1], command, tail, orjson.loads(match["output"])))
    return found


DOCUMENTED = documented()
IDS = [d[0] for d in DOCUMENTED]


@pytest.fixture(scope="module")
def app_answers() -> dict[str, Any]:
    """What ``make run``'s app answers for each documented example, with the section's filter."""
    store = EmbeddedStore([OBJECTS])
    store.load()
    app = create_app(ServeSettings(), store)
    answers = {}
    for file, _, tail, _ in DOCUMENTED:
        response = call(app, "POST", VALIDATE, (ADMISSION / file).read_bytes())
        assert response.status_code == 200
        answers[file] = FILTERS[tail](response.json())
    return answers


def test_every_podcliqueset_example_is_generated_and_documented_once() -> None:
    assert generate.render() == {p.name: p.read_bytes() for p in ADMISSION.glob("pcs-*.json")}
    assert IDS == list(generate.reviews())
    uids = [orjson.loads((ADMISSION / f).read_bytes())["request"]["uid"] for f in IDS]
    assert len(set(uids)) == len(uids)


def test_the_rules_are_each_shown() -> None:
    for rule in ("t1", "t2", "t3", "r1", "r2", "r3", "r4", "f1", "f2", "f3", "g1", "g2", "u1", "u3", "u4"):
        assert any(f"-{rule}-" in file for file in IDS), rule
    assert "pcs-update-scope-immutable.json" in IDS


@pytest.mark.parametrize(("file", "shown"), [(f, s) for f, _, _, s in DOCUMENTED], ids=IDS)
def test_readme_shows_what_the_app_answers(file: str, shown: Any, app_answers: dict[str, Any]) -> None:
    assert app_answers[file] == shown


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Served:
    with serve(tmp_path_factory.mktemp("readme"), "--objects", str(OBJECTS)) as served:
        yield served  # type: ignore[misc]


def test_the_real_server_over_tls_answers_every_curl_as_shown(server: Served) -> None:
    with server.client() as client:
        for file, _, tail, shown in DOCUMENTED:
            response = client.post(VALIDATE, content=(ADMISSION / file).read_bytes(), headers={"content-type": "application/json"})
            assert response.status_code == 200, file
            assert FILTERS[tail](response.json()) == shown, file


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="curl and jq are not installed")
def test_the_commands_as_typed(server: Served) -> None:
    """Each command exactly as the README shows it, pointed at the test server's port and CA."""
    port = server.url.rsplit(":", 1)[1]
    for file, command, _, shown in DOCUMENTED:
        typed = command.replace("certs/ca.crt", str(server.ca)).replace("127.0.0.1:8443", f"127.0.0.1:{port}")
        result = subprocess.run(["bash", "-c", typed], cwd=ROOT, capture_output=True, timeout=30)
        assert result.returncode == 0, (file, result.stderr)
        assert orjson.loads(result.stdout) == shown, file


@pytest.mark.parametrize(("file", "tail", "shown"), [(f, t, s) for f, _, t, s in DOCUMENTED], ids=IDS)
def test_review_prints_what_the_server_answers(file: str, tail: str, shown: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["review", str(ADMISSION / file)])
    printed = orjson.loads(capsys.readouterr().out)
    assert FILTERS[tail](printed) == shown
    response = printed["response"]
    assert code == (0 if response["allowed"] else 1)


def test_python_m_webhook_review_prints_the_same_bytes_as_the_server(server: Served) -> None:
    file = ADMISSION / "pcs-update-scope-immutable.json"
    result = subprocess.run([sys.executable, "-m", "webhook", "review", str(file)], capture_output=True, timeout=60, cwd=ROOT)
    with server.client() as client:
        answered = client.post(VALIDATE, content=file.read_bytes(), headers={"content-type": "application/json"})
    assert result.returncode == 1
    assert result.stdout.rstrip(b"\n") == answered.content
