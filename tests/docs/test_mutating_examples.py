"""The pod examples and examples/README.md's "Mutating webhook examples" say what the server does.

Every curl in that section is answered here by the app ``make run`` serves (the embedded store of
``examples/objects/``), its jq filter applied, and compared with the JSON the section shows; and
once more by the real ``python -m webhook serve`` over TLS (with the command itself run as typed
when curl, jq and base64 are installed). The example files must be what
``examples/generate_pods.py`` writes.
"""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonpatch
import orjson
import pytest
from core.workload import generate_pods
from server.asgi import call
from server.serverproc import Served, serve

from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

ROOT = Path(__file__).resolve().parents[2]
ADMISSION = ROOT / "examples" / "admission"
SECTION = ROOT.joinpath("examples", "README.md").read_text().partition("\n## Mutating webhook examples\n")[2].partition("\n## ")[0]
EXAMPLE = re.compile(r"```sh\n(?P<command>.*?)\n```\s*```json\n(?P<output>.*?)\n```", re.S)
PATCH_FILTER = "| jq -r .response.patch | base64 -d | jq ."
RESPONSE_FILTER = "| jq .response"


def documented() -> list[tuple[str, str, Any]]:
    """(example file, jq filter, shown output) of each curl in the section, in order."""
    found = []
    for match in EXAMPLE.finditer(SECTION):
        command = match["command"].replace("\\\n", " ")
        file = re.search(r"--data-binary @examples/admission/(\S+)", command)
        assert file, f"no example file in {command!r}"
        assert "https://127.0.0.1:8443/webhooks/mutate-pod" in command
        tail = next(f for f in (PATCH_FILTER, RESPONSE_FILTER) if command.rstrip().endswith(f))
        found.append((file[1], tail, orjson.loads(match["output"])))
    return found


DOCUMENTED = documented()
COMMANDS = [match["command"] for match in EXAMPLE.finditer(SECTION)]


def answer(file: str, **settings: Any) -> dict[str, Any]:
    store = EmbeddedStore([ROOT / "examples" / "objects"])
    store.load()
    response = call(create_app(ServeSettings(**settings), store), "POST", "/webhooks/mutate-pod", (ADMISSION / file).read_bytes())
    assert response.status_code == 200
    return response.json()


def decoded_patch(review_answer: dict[str, Any]) -> Any:
    return orjson.loads(base64.b64decode(review_answer["response"]["patch"]))


def test_every_pod_example_is_generated_and_documented() -> None:
    assert generate_pods.render() == {p.name: p.read_bytes() for p in ADMISSION.glob("pod-*.json")}
    assert [file for file, _, _ in DOCUMENTED] == list(generate_pods.EXAMPLE_PODS)


@pytest.mark.parametrize(("file", "tail", "shown"), DOCUMENTED, ids=[d[0] for d in DOCUMENTED])
def test_readme_shows_what_the_server_answers(file: str, tail: str, shown: Any) -> None:
    review_answer = answer(file)
    assert (decoded_patch(review_answer) if tail == PATCH_FILTER else review_answer["response"]) == shown


CLAIMS = {
    "pod-worker-a.json": [
        "rs-test-all-int-tpl5", "rs-test-0-ext-tpl", "rs-test-0-int-tpl",
        "rs-test-0-worker-a-all-ext-ns-tpl", "rs-test-0-worker-a-0-int-tpl4",
    ],
    "pod-worker-b.json": [
        "rs-test-all-int-tpl5", "rs-test-all-int-tpl7", "rs-test-0-ext-tpl", "rs-test-0-sga-all-int-tpl2",
        "rs-test-0-sga-all-int-tpl8", "rs-test-0-sga-1-int-tpl3", "rs-test-0-sga-1-worker-b-all-int-tpl6",
    ],
    "pod-init-containers.json": [
        "rs-test-all-int-tpl5", "rs-test-all-int-tpl7", "rs-test-0-ext-tpl", "rs-test-0-sga-all-int-tpl2",
        "rs-test-0-sga-all-int-tpl8", "rs-test-0-sga-0-int-tpl3", "rs-test-0-sga-0-worker-b-all-int-tpl6",
    ],
}


@pytest.mark.parametrize(("file", "claims"), CLAIMS.items(), ids=list(CLAIMS))
def test_applied_patch_gives_the_pod_groves_claims(file: str, claims: list[str]) -> None:
    pod = orjson.loads((ADMISSION / file).read_bytes())["request"]["object"]
    spec = jsonpatch.apply_patch(pod, decoded_patch(answer(file)))["spec"]
    assert [c["name"] for c in spec["resourceClaims"]] == claims
    for container in spec["containers"] + spec.get("initContainers", []):
        got = [c["name"] for c in container.get("resources", {}).get("claims", [])]
        assert got == ([] if container["name"] == "grove-initc" else claims), container["name"]


def test_unknown_podcliqueset_is_admitted_with_a_warning_when_asked() -> None:
    response = answer("pod-unknown-pcs.json", on_missing_pcs="allow")["response"]
    assert response["allowed"] is True and "patch" not in response
    assert response["warnings"] == [
        "PodCliqueSet default/rs-other (label app.kubernetes.io/part-of of the pod) not found: "
        "pod admitted without shared ResourceClaims"
    ]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Served:
    with serve(tmp_path_factory.mktemp("examples"), "--objects", str(ROOT / "examples" / "objects")) as served:
        yield served  # type: ignore[misc]


def test_the_real_server_over_tls_answers_every_curl_as_shown(server: Served) -> None:
    with server.client() as client:
        for file, tail, shown in DOCUMENTED:
            response = client.post("/webhooks/mutate-pod", content=(ADMISSION / file).read_bytes(),
                                   headers={"content-type": "application/json"})
            assert response.status_code == 200, file
            assert (decoded_patch(response.json()) if tail == PATCH_FILTER else response.json()["response"]) == shown, file


@pytest.mark.skipif(not all(shutil.which(tool) for tool in ("curl", "jq", "base64")), reason="curl, jq or base64 is not installed")
def test_the_commands_as_typed(server: Served) -> None:
    """Each command exactly as the section shows it, pointed at the test server's port and CA."""
    port = server.url.rsplit(":", 1)[1]
    for (file, _, shown), command in zip(DOCUMENTED, COMMANDS, strict=True):
        typed = command.replace("certs/ca.crt", str(server.ca)).replace("127.0.0.1:8443", f"127.0.0.1:{port}")
        result = subprocess.run(["bash", "-c", typed], cwd=ROOT, capture_output=True, timeout=30)
        assert result.returncode == 0, (file, result.stderr)
        assert orjson.loads(result.stdout) == shown, file
