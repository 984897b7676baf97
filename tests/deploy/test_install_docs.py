"""The README's "Install in a cluster" commands name values, objects and answers that really exist,
and the README, the chart's README and its NOTES.txt install and remove the same release."""

from __future__ import annotations

import json
import re

import pytest

from deploy.chart import ROOT, lookup, values
from webhook.cli import main

#: The release and namespace every document installs into.
RELEASE, NAMESPACE = "grove-sharing-webhook", "grove-sharing-webhook"


def section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## Install in a cluster\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_every_set_flag_names_a_chart_value():
    keys = re.findall(r"--set ([A-Za-z0-9_.]+)=", section())
    assert len(keys) >= 6
    for key in keys:
        lookup(values(), key)


def test_the_object_names_in_the_commands_are_the_ones_the_chart_creates(render):
    installed = render(release=RELEASE, namespace=NAMESPACE)
    text = section()
    deployment = installed.one("Deployment")["metadata"]["name"]
    assert f"deployment/{deployment}" in text
    names = {installed.one(kind)["metadata"]["name"]
             for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")}
    assert len(names) == 1
    assert f"validatingwebhookconfiguration,mutatingwebhookconfiguration {names.pop()}" in text
    validating = installed.one("ValidatingWebhookConfiguration")["webhooks"][0]["name"]
    assert f'"{validating}" denied the request' in text
    service = installed.one("Service")["metadata"]["name"]
    assert f"--cert-hosts {service}.{NAMESPACE}.svc " in text
    assert f"app.kubernetes.io/instance={RELEASE}" in text


def test_the_denial_shown_is_what_the_webhook_answers(capsys):
    text = section()
    (example,) = re.findall(r"< (examples/admission/[\w.-]+\.json) \\\n\s+\| kubectl apply --dry-run=server", text)
    assert main(["review", str(ROOT / example)]) == 1
    message = json.loads(capsys.readouterr().out)["response"]["status"]["message"]
    shown = re.search(r"denied the request:\n# (.*)\n", text)
    assert shown and shown.group(1) == message


@pytest.mark.parametrize("path", ["examples/objects/workload-resource-sharing.yaml",
                                  "examples/admission/pcs-create-warnings.json"])
def test_the_files_the_section_uses_exist(path):
    assert path in section()
    assert (ROOT / path).is_file()


def test_the_install_notes_name_the_objects_installed(render):
    installed = render(release=RELEASE, namespace=NAMESPACE)
    notes = installed.notes
    assert f"kubectl -n {NAMESPACE} rollout status deployment/{installed.one('Deployment')['metadata']['name']}" in notes
    assert "pre-delete hook Job first deletes both webhook configurations" in notes
    assert f"helm uninstall {RELEASE} --namespace {NAMESPACE}" in notes
    assert f"every namespace except {NAMESPACE} and kube-system" in notes


def test_the_install_notes_give_the_readme_s_commands(render):
    notes = render(release=RELEASE, namespace=NAMESPACE).notes
    commands = [line.strip() for line in notes.splitlines() if line.startswith(("  kubectl ", "  helm "))]
    assert len(commands) >= 4
    readme_lines = {line.strip() for line in section().splitlines()}
    for command in commands:
        assert command in readme_lines, command


@pytest.mark.parametrize("path", ["README.md", "charts/grove-sharing-webhook/README.md"])
def test_every_helm_command_uses_the_same_release_and_namespace(path):
    text = (ROOT / path).read_text().replace("\\\n", " ")
    commands = re.findall(r"^helm (?:install|upgrade|uninstall) .*$", text, re.MULTILINE)
    assert commands
    for command in commands:
        assert command.split()[2] == RELEASE, command
        assert re.search(rf"(?:--namespace|-n) {NAMESPACE}(?: |$)", command), command
    namespaces = re.findall(r"(?:kubectl|helm) .*?(?:--namespace|-n) (\S+)", text)
    # Besides the release's: the workload's namespace, and that of the template it shares across namespaces.
    assert set(namespaces) <= {NAMESPACE, "rs-demo", "rs-shared"}, namespaces
