"""``webhook claims``: what a PodCliqueSet makes, as the reconciler creates it and the pod webhook
injects it, at the replica counts of the spec or of the objects given."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from core.answers import mutated
from core.pod.test_handler import STEPS, patched_pod, step_pods
from core.workload import pod_review, workload_pcs
from fakeapi import FakeApiServer
from reconciler.expected import SPECS, Claim, Expect
from reconciler.grove import WORKLOAD, GroveOperator, ext_ns_template, workload
from reconciler.e2e import expected
from webhook.cli import main

REPLICA_LABELS = {
    "PodCliqueSet": "grove.io/podcliqueset-replica-index",
    "PodCliqueScalingGroup": "grove.io/podcliquescalinggroup-replica-index",
    "PodClique": "grove.io/podclique-pod-index",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["claims", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def listed(capsys: pytest.CaptureFixture[str], *paths: Path) -> dict[str, Any]:
    code, out, err = run(capsys, *map(str, paths), "--output", "json")
    assert (code, err) == (0, "")
    document: dict[str, Any] = orjson.loads(out)
    return document


def comparable(document: dict[str, Any]) -> dict[str, tuple[str, str, int | None, dict[str, Any]]]:
    """name -> (owner kind, owner name, replica, the spec the claim gets), from the command's JSON."""
    found = {}
    for claim in document["claims"]:
        assert claim["namespace"] == "default"
        found[claim["name"]] = (claim["owner"]["kind"], claim["owner"]["name"], claim["replica"], SPECS[claim["template"]["name"]])
    assert len(found) == len(document["claims"]), "a claim is listed twice"
    return found


def reconciled(claims: dict[str, Claim]) -> dict[str, tuple[str, str, int | None, dict[str, Any]]]:
    """The same, from the claims ``test_scenario`` checks the reconciler creates."""
    found = {}
    for name, (labels, owners, spec) in claims.items():
        kind = owners[0]["kind"]
        replica = labels.get(REPLICA_LABELS[kind])
        found[name] = (kind, owners[0]["name"], None if replica is None else int(replica), spec)
    return found


def injected(replicas: int, step: str) -> dict[tuple[str, int], list[str]]:
    """(PodClique, pod index) -> the claims the pod webhook gives each pod Grove runs at ``step``."""
    pcs = (workload_pcs(replicas))
    found = {}
    for _, _, pod, _ in step_pods(step):
        after = patched_pod(pod, mutated(pod_review(pod), [pcs]))
        labels = pod["metadata"]["labels"]
        key = (labels["grove.io/podclique"], int(labels["grove.io/podclique-pod-index"]))
        found[key] = [c["name"] for c in after["spec"]["resourceClaims"]]
    return found


def pods(document: dict[str, Any]) -> dict[tuple[str, int], list[str]]:
    return {(pod["podClique"], pod["podIndex"]): pod["claims"] for pod in document["pods"]}


class Offline:
    """``Expect`` without a server: owner UIDs are not compared."""

    def get(self, *_: Any) -> None:
        return None


def test_the_workload_lists_what_the_reconciler_creates_and_the_webhook_injects(capsys: pytest.CaptureFixture[str]) -> None:
    document = listed(capsys, WORKLOAD)
    assert comparable(document) == reconciled(expected(Expect(Offline(), "rs-test"), {0: 2}))  # type: ignore[arg-type]
    assert pods(document) == injected(1, "A initial")
    assert [c["name"] for c in document["claims"]][:4] == [
        "rs-test-all-int-tpl5", "rs-test-all-int-tpl7", "rs-test-0-ext-tpl", "rs-test-0-int-tpl",
    ]
    templates = {c["template"]["name"]: c["template"]["namespace"] for c in document["claims"]}
    assert (templates["ext-tpl"], templates["ext-ns-tpl"], templates["int-tpl5"]) == ("default", "rs-shared", None)
    assert set(document) == {"claims", "pods", "podCliqueSets"}
    assert set(document["claims"][0]) == {"name", "namespace", "scope", "replica", "owner", "template"}


def dump(api: FakeApiServer, path: Path) -> Path:
    objects = [
        *api.list("podcliquesets", "default"),
        *api.list("podcliquescalinggroups", "default"),
        *api.list("podcliques", "default"),
    ]
    path.write_text(yaml.safe_dump_all(objects))
    return path


# step of tests/reconciler/test_scenario.py: (how Grove scales, {PCS replica: sga replicas}, worker-a replicas)
SCALED = {
    "A initial": (None, {0: 2}, 1),
    "B sga 2 to 1": (("podcliquescalinggroups", "rs-test-0-sga", 1), {0: 1}, 1),
    "C sga 1 to 3": (("podcliquescalinggroups", "rs-test-0-sga", 3), {0: 3}, 1),
    "D worker-a 1 to 2": (("podcliques", "rs-test-0-worker-a", 2), {0: 3}, 2),
    "E worker-a 2 to 1": (("podcliques", "rs-test-0-worker-a", 1), {0: 3}, 1),
    "F pcs 1 to 2": (("podcliquesets", "rs-test", 2), {0: 3, 1: 2}, 1),
    "G pcs 2 to 1": (("podcliquesets", "rs-test", 1), {0: 3}, 1),
}


def test_with_the_objects_grove_made_the_counts_are_theirs_at_every_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeApiServer() as api:
        ext_tpl, pcs = workload()
        api.create(ext_ns_template())
        api.create({**ext_tpl, "metadata": {**ext_tpl["metadata"], "namespace": "default"}})
        grove = GroveOperator(api, pcs)
        grove.sync()
        expect = Expect(api, "rs-test")
        for step, (scale, groups, worker_a) in SCALED.items():
            if scale:
                grove.scale(*scale)
            document = listed(capsys, dump(api, tmp_path / "objects.yaml"))
            assert comparable(document) == reconciled(expected(expect, groups, worker_a)), step
            assert pods(document) == injected(STEPS[step][0], step), step


def test_the_table_shows_each_claim_and_each_pods_claims(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(WORKLOAD))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "PodCliqueSet default/rs-test: 12 ResourceClaims, 3 pods (replica counts of the spec)"
    assert re.split(r" {3,}", lines[2]) == ["CLAIM", "SCOPE", "OWNER REPLICA", "OWNER", "TEMPLATE"]
    rows = [line.split() for line in lines]
    assert ["rs-test-0-worker-a-all-ext-ns-tpl", "AllReplicas", "-", "PodClique/rs-test-0-worker-a", "rs-shared/ext-ns-tpl"] in rows
    assert ["rs-test-0-sga-1-int-tpl3", "PerReplica", "1", "PodCliqueScalingGroup/rs-test-0-sga", "int-tpl3"] in rows
    assert ["rs-test-all-int-tpl5", "AllReplicas", "-", "PodCliqueSet/rs-test", "int-tpl5"] in rows
    assert re.split(r" {3,}", lines[lines.index("") + 15]) == ["PODCLIQUE", "POD INDEX", "CLAIMS"]
    worker_a = rows.index(["rs-test-0-worker-a", "0", "rs-test-all-int-tpl5"])
    assert [line.strip() for line in lines[worker_a + 1 : worker_a + 5]] == [
        "rs-test-0-ext-tpl", "rs-test-0-int-tpl", "rs-test-0-worker-a-all-ext-ns-tpl", "rs-test-0-worker-a-0-int-tpl4",
    ]


def write(tmp_path: Path, *objects: dict[str, Any], name: str = "objects.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objects))
    return path


def rs_test(**spec: Any) -> dict[str, Any]:
    pcs = workload()[1]
    pcs["spec"].update(spec)
    return pcs


def test_warnings_and_denials_go_to_stderr_as_the_webhook_gives_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long_name = rs_test()
    long_name["metadata"]["name"] = "rs-test-with-a-name-too-long-for-the-claims-it-shares"
    code, out, err = run(capsys, str(write(tmp_path, long_name)), "--output", "json")
    assert code == 0
    assert orjson.loads(out)["claims"]
    assert err.startswith(
        "Warning: PodCliqueSet default/rs-test-with-a-name-too-long-for-the-claims-it-shares: spec.template.resourceSharing[0]: "
        'claim name "rs-test-with-a-name-too-long-for-the-claims-it-shares-all-int-tpl5" is not a valid DNS-1123 label'
    )

    bad_scope = rs_test()
    bad_scope["spec"]["template"]["resourceSharing"][0]["scope"] = "Sometimes"
    code, out, err = run(capsys, str(write(tmp_path, bad_scope)))
    assert code == 1
    assert out.startswith("PodCliqueSet default/rs-test: 11 ResourceClaims, 3 pods")
    assert err == (
        "Error: PodCliqueSet default/rs-test is denied by the validating webhook: spec.template.resourceSharing[0].scope: "
        'Unsupported value: "Sometimes": supported values: "AllReplicas", "PerReplica"\n'
    )


def test_the_json_and_yaml_documents_carry_the_warnings_and_the_denial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long_name = rs_test()
    long_name["metadata"]["name"] = "rs-test-with-a-name-too-long-for-the-claims-it-shares"
    bad_scope = rs_test()
    bad_scope["spec"]["template"]["resourceSharing"][0]["scope"] = "Sometimes"
    files = [str(write(tmp_path, long_name, name="long.yaml")), str(write(tmp_path, bad_scope, name="bad.yaml"))]
    code, out, err = run(capsys, *files, "-o", "json")
    assert code == 1
    said = orjson.loads(out)["podCliqueSets"]
    assert [(p["name"], p["denial"] is None, bool(p["warnings"])) for p in said] == [
        ("rs-test-with-a-name-too-long-for-the-claims-it-shares", True, True), ("rs-test", False, False)
    ]
    assert said[1]["denial"].startswith('spec.template.resourceSharing[0].scope: Unsupported value: "Sometimes"')
    assert said[0]["warnings"][0] in err and said[1]["denial"] in err, "stderr keeps the lines"
    code, out, _ = run(capsys, *files, "-o", "yaml")
    assert code == 1 and yaml.safe_load(out) == orjson.loads(run(capsys, *files, "-o", "json")[1])


def test_strict_shows_what_the_strict_webhook_denies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long_name = rs_test()
    long_name["metadata"]["name"] = "rs-test-with-a-name-too-long-for-the-claims-it-shares"
    path = str(write(tmp_path, long_name))
    assert run(capsys, path)[0] == 0
    code, out, err = run(capsys, path, "--strict", "-o", "json")
    assert code == 1
    denial = orjson.loads(out)["podCliqueSets"][0]["denial"]
    assert "is not a valid DNS-1123 label" in denial and "Warning:" not in err


def test_children_the_reconciler_would_not_count_are_noted_and_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pcs = rs_test()
    stale = {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodClique",
        "metadata": {
            "name": "rs-test-1-worker-a",
            "labels": {"app.kubernetes.io/part-of": "rs-test", "grove.io/podcliqueset-replica-index": "1"},
        },
        "spec": {"replicas": 4},
    }
    current = {**stale, "metadata": {"name": "rs-test-0-worker-a", "labels": {**stale["metadata"]["labels"], "grove.io/podcliqueset-replica-index": "0"}}}
    code, out, err = run(capsys, str(write(tmp_path, pcs, stale, current)), "--output", "json")
    assert code == 0
    assert err == (
        "Note: PodClique default/rs-test-1-worker-a is not counted: its label grove.io/podcliqueset-replica-index='1' "
        "is not a replica index of PodCliqueSet default/rs-test, which has 1 replicas\n"
    )
    document = orjson.loads(out)
    assert sorted(pods(document)) == [("rs-test-0-worker-a", k) for k in range(4)]
    assert [c["name"] for c in document["claims"] if c["owner"]["kind"] != "PodCliqueSet"] == [
        "rs-test-0-worker-a-all-ext-ns-tpl", *(f"rs-test-0-worker-a-{k}-int-tpl4" for k in range(4)),
    ]


def test_options_come_from_the_environment_too(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOOK_OUTPUT", "json")
    monkeypatch.setenv("WEBHOOK_MAX_ITEMS", "15")  # 12 claims and 3 pods
    code, out, _ = run(capsys, str(WORKLOAD))
    assert code == 0 and len(orjson.loads(out)["pods"]) == 3
    monkeypatch.setenv("WEBHOOK_MAX_ITEMS", "14")
    code, out, err = run(capsys, str(WORKLOAD))
    assert (code, out) == (2, "")
    assert err.endswith("more than the limit of 14 items (--max-items)\n")
    assert run(capsys, str(WORKLOAD), "--max-items", "15")[0] == 0


ORPHAN = {
    "apiVersion": "grove.io/v1alpha1",
    "kind": "PodCliqueScalingGroup",
    "metadata": {"name": "other-0-sga", "namespace": "team", "labels": {"app.kubernetes.io/part-of": "other"}},
}


UNPLACED = {
    "apiVersion": "grove.io/v1alpha1",
    "kind": "PodClique",
    "metadata": {"labels": {"app.kubernetes.io/part-of": "rs-test", "grove.io/podcliqueset-replica-index": "0"}},
    "spec": {"replicas": 1},
}


@pytest.mark.parametrize(
    ("files", "error"),
    [
        pytest.param({}, "{dir}/missing.yaml: no such file or directory", id="missing-file"),
        pytest.param({"bad.yaml": "a: [\n"}, "{dir}/bad.yaml: document 1: not valid YAML: did not find expected node content (line 2, column 1)", id="bad-yaml"),
        pytest.param({"bad.json": "{"}, "{dir}/bad.json: not valid JSON: ", id="bad-json"),
        pytest.param({"cm.yaml": yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap"})}, "no PodCliqueSet found in {dir}/cm.yaml", id="no-podcliqueset"),
        pytest.param(
            {"orphan.yaml": yaml.safe_dump_all([rs_test(), ORPHAN])},
            "{dir}/orphan.yaml: document 2: PodCliqueScalingGroup team/other-0-sga belongs to PodCliqueSet team/other "
            "(label app.kubernetes.io/part-of), which none of the files defines",
            id="child-of-no-podcliqueset",
        ),
        pytest.param(
            {"unlabelled.yaml": yaml.safe_dump_all([rs_test(), {**ORPHAN, "metadata": {"name": "x"}}])},
            "{dir}/unlabelled.yaml: document 2: PodCliqueScalingGroup default/x has no label app.kubernetes.io/part-of naming its PodCliqueSet",
            id="child-without-podcliqueset-label",
        ),
        pytest.param(
            {"unplaced.yaml": yaml.safe_dump_all([rs_test(), {**UNPLACED, "metadata": {**UNPLACED["metadata"], "name": "other-0-worker-a"}}])},
            "PodClique default/other-0-worker-a cannot be placed in PodCliqueSet rs-test: error extracting PCS replica index "
            'for PodClique default/other-0-worker-a: strconv.Atoi: parsing "worker": invalid syntax',
            id="child-grove-labels-do-not-place",
        ),
        pytest.param(
            {"twice.yaml": yaml.safe_dump_all([rs_test(), rs_test()])},
            "{dir}/twice.yaml: document 2: PodCliqueSet default/rs-test is already defined in {dir}/twice.yaml: document 1",
            id="podcliqueset-twice",
        ),
        pytest.param(
            {"huge.yaml": yaml.safe_dump(rs_test(replicas=2_000_000_000))},
            "PodCliqueSet default/rs-test makes 20000000002 ResourceClaims for 6000000000 pods (with spec.replicas "
            "2000000000 and the template's replica counts): more than the limit of 10000 items (--max-items)",
            id="two-billion-replicas",
        ),
    ],
)
def test_unusable_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], error: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, out, err = run(capsys, str(tmp_path / (next(iter(files), "missing.yaml"))))
    assert (code, out) == (2, "")
    assert err.startswith("webhook claims: error: " + error.format(dir=tmp_path))
    assert err.count("\n") == 1


def test_help_lists_the_command() -> None:
    result = subprocess.run([sys.executable, "-m", "webhook", "--help"], capture_output=True, text=True, check=True)
    assert "    claims " in result.stdout
    result = subprocess.run([sys.executable, "-m", "webhook", "claims", "--help"], capture_output=True, text=True, check=True)
    text = " ".join(result.stdout.split())
    assert "FILE [FILE ...]" in text
    assert "--output table|json" in text and "[env WEBHOOK_OUTPUT; default table]" in text
    assert "[env WEBHOOK_MAX_ITEMS; default 10000]" in text


def test_an_owner_over_the_reconcilers_limit_lists_the_claims_it_makes_and_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pcs = rs_test()
    worker_a = pcs["spec"]["template"]["cliques"][0]
    assert worker_a["name"] == "worker-a"
    worker_a["spec"]["replicas"] = 10_001
    code, out, err = run(capsys, str(write(tmp_path, pcs)), "--output", "json", "--max-items", "50000")
    assert code == 0
    owned = [c for c in orjson.loads(out)["claims"] if c["owner"] == {"kind": "PodClique", "name": "rs-test-0-worker-a"}]
    assert len(owned) == 10_000
    warning = next(line for line in err.splitlines() if "rs-test-0-worker-a needs" in line)
    assert warning.startswith("Warning: PodCliqueSet default/rs-test: spec.template.cliques[0].resourceSharing: PodClique ")
    assert warning.endswith("ResourceClaims, more than the limit of 10000 (--max-claims-per-owner): only the first 10000 are created")


def test_the_limit_is_the_one_the_reconciler_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reconciler run with a higher limit makes every claim: so does the listing, without the warning."""
    pcs = rs_test()
    pcs["spec"]["template"]["cliques"][0]["spec"]["replicas"] = 10_001
    path = str(write(tmp_path, pcs))

    def owned(*options: str) -> tuple[int, str]:
        code, out, err = run(capsys, path, "--output", "json", "--max-items", "50000", *options)
        assert code == 0
        claims = [c for c in orjson.loads(out)["claims"] if c["owner"]["name"] == "rs-test-0-worker-a"]
        return len(claims), err

    assert owned("--max-claims-per-owner", "20000") == (10_002, "")  # one AllReplicas, 10,001 PerReplica
    monkeypatch.setenv("WEBHOOK_MAX_CLAIMS_PER_OWNER", "5000")
    count, err = owned()
    assert count == 5_000 and "more than the limit of 5000 (--max-claims-per-owner)" in err
