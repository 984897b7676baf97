"""The validating webhook as the real kube-apiserver calls it: the README's "Check that it works" as
typed, and every PodCliqueSet example decided by the API server as ``webhook review`` decides it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cluster import kube
from cluster.release import ROOT, Release
from cluster.tools import Tool

ADMISSION = ROOT / "examples" / "admission"
README = (ROOT / "README.md").read_text()
WEBHOOK = "resource-sharing.pcs.validating.webhooks.grove.io"


def request(example: str) -> dict[str, Any]:
    return dict(json.loads((ADMISSION / example).read_text())["request"])


def review(path: Path) -> dict[str, Any]:
    """What ``python -m webhook review`` answers for the example."""
    done = subprocess.run([sys.executable, "-m", "webhook", "review", str(path)], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return dict(json.loads(done.stdout)["response"])


def readme_denial() -> str:
    """The error the README shows for its dry run, as one line."""
    block = README.partition("| kubectl apply --dry-run=server -f -\n")[2].partition("```")[0]
    return " ".join(line.removeprefix("# ") for line in block.strip().splitlines())


def test_the_readmes_dry_run_is_denied_with_the_readmes_text(release: Release, kubectl: Tool) -> None:
    command = re.search(r"python3 -c '(.*?)' \\\n\s+< (\S+)", README)
    assert command, "the README's dry run is not where this test looks for it"
    code, example = command.groups()
    pcs = subprocess.run([sys.executable, "-c", code], stdin=(ROOT / example).open(), capture_output=True, text=True, check=True)
    done = kubectl("apply", "--dry-run=server", "-f", "-", input=pcs.stdout, check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == readme_denial()


def test_the_warnings_example_prints_each_warning(release: Release, kubectl: Tool) -> None:
    example = ADMISSION / "pcs-create-warnings.json"
    warnings = review(example)["warnings"]
    assert warnings
    done = kubectl("apply", "--dry-run=server", "-f", "-", input=json.dumps(request(example.name)["object"]))
    printed = [line.removeprefix("Warning: ") for line in done.stderr.splitlines() if line.startswith("Warning: ")]
    # Then the templates the cluster does not hold, which review (no API server) cannot know (DECISIONS.md §3.4).
    assert printed[: len(warnings)] == warnings
    assert all('" not found; its claims are not created' in line for line in printed[len(warnings):])


@pytest.mark.parametrize("example", sorted(p.name for p in ADMISSION.glob("pcs-create-*.json")))
def test_each_create_example_is_decided_as_review_decides_it(release: Release, admin: client.ApiClient, example: str) -> None:
    expected = review(ADMISSION / example)
    pcs = request(example)["object"]
    pcs["apiVersion"] = "grove.io/v1alpha1"
    api = kube.custom(admin)
    try:
        api.create_namespaced_custom_object("grove.io", "v1alpha1", pcs["metadata"]["namespace"], "podcliquesets", pcs, dry_run="All")
    except ApiException as err:
        status = json.loads(err.body)
        assert not expected["allowed"], f"the API server denied what review allows: {status['message']}"
        if err.status == 422:
            # Grove's CRD refused it before any validating webhook ran (the schema's enum of scopes):
            # the webhook would have named the same fields.
            fields = [cause["field"] for cause in status["details"]["causes"] if cause["field"] != "<nil>"]
            assert fields and all(f"{field}:" in expected["status"]["message"] for field in fields), status["message"]
            return
        assert err.status == expected["status"]["code"]
        assert status["message"] == f'admission webhook "{WEBHOOK}" denied the request: {expected["status"]["message"]}'
    else:
        assert expected["allowed"], f"the API server admitted what review denies: {expected['status']['message']}"


def test_the_readmes_workload_is_created(release: Release, kubectl: Tool, admin: client.ApiClient) -> None:
    kubectl("create", "namespace", "rs-demo")
    workload = ROOT / "examples" / "objects" / "workload-resource-sharing.yaml"
    kubectl("-n", "rs-demo", "apply", "-f", str(workload))
    stored = kube.custom(admin).get_namespaced_custom_object("grove.io", "v1alpha1", "rs-demo", "podcliquesets", "rs-test")
    applied = next(d for d in yaml.safe_load_all(workload.read_text()) if d and d["kind"] == "PodCliqueSet")
    assert stored["spec"]["template"]["resourceSharing"] == applied["spec"]["template"]["resourceSharing"]


@pytest.mark.parametrize("example", sorted(p.name for p in ADMISSION.glob("pcs-update-*.json")))
def test_each_update_example_is_decided_as_review_decides_it(release: Release, admin: client.ApiClient, example: str) -> None:
    expected = review(ADMISSION / example)
    old, new = request(example)["oldObject"], request(example)["object"]
    namespace = f"update-{example.removeprefix('pcs-update-').removesuffix('.json')}"
    kube.create_namespace(admin, namespace)
    api = kube.custom(admin)
    for pcs in (old, new):
        pcs["metadata"]["namespace"] = namespace
    created = api.create_namespaced_custom_object("grove.io", "v1alpha1", namespace, "podcliquesets", old)
    new["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    try:
        api.replace_namespaced_custom_object("grove.io", "v1alpha1", namespace, "podcliquesets", new["metadata"]["name"], new)
    except ApiException as err:
        message = json.loads(err.body)["message"]
        assert not expected["allowed"], f"the API server denied what review allows: {message}"
        assert message == f'admission webhook "{WEBHOOK}" denied the request: {expected["status"]["message"]}'
    else:
        assert expected["allowed"], f"the API server admitted what review denies: {expected['status']['message']}"
