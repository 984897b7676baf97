"""``webhook policy``: the ValidatingAdmissionPolicy and binding a user pipes to ``kubectl apply``."""

from __future__ import annotations

import json

import pytest
import yaml

from webhook.cli import main


def printed(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["policy", *args]) == 0
    return capsys.readouterr().out


def test_it_prints_the_policy_then_its_binding_as_two_yaml_documents(capsys: pytest.CaptureFixture[str]) -> None:
    policy, binding = yaml.safe_load_all(printed(capsys))
    assert (policy["apiVersion"], policy["kind"]) == ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy")
    assert policy["spec"]["matchConstraints"]["resourceRules"] == [{
        "apiGroups": ["grove.io"], "apiVersions": ["v1alpha1"], "resources": ["podcliquesets"],
        "operations": ["CREATE", "UPDATE"], "scope": "Namespaced",
    }]
    assert policy["spec"]["failurePolicy"] == "Fail"
    assert binding["spec"] == {
        "policyName": "grove-sharing-webhook",
        "validationActions": ["Deny"],
        "matchResources": {"namespaceSelector": {"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}]}},
    }


def test_options_name_both_objects_set_the_failure_policy_and_the_namespaces_left_alone(capsys: pytest.CaptureFixture[str]) -> None:
    policy, binding = yaml.safe_load_all(printed(
        capsys, "--name", "grove.example", "--failure-policy", "Ignore",
        "--exclude-namespace", "kube-system", "--exclude-namespace", "grove-system"))
    assert policy["metadata"]["name"] == binding["metadata"]["name"] == binding["spec"]["policyName"] == "grove.example"
    assert policy["spec"]["failurePolicy"] == "Ignore"
    assert binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system", "grove-system"]


def test_the_environment_sets_the_options_and_an_empty_list_binds_every_namespace(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEBHOOK_EXCLUDE_NAMESPACE", "")
    monkeypatch.setenv("WEBHOOK_NAME", "from-env")
    _, binding = yaml.safe_load_all(printed(capsys))
    assert binding["spec"] == {"policyName": "from-env", "validationActions": ["Deny"]}


def test_json_is_one_list_kubectl_applies(capsys: pytest.CaptureFixture[str]) -> None:
    document = json.loads(printed(capsys, "--output", "json"))
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    assert [item["kind"] for item in document["items"]] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    assert document["items"] == list(yaml.safe_load_all(printed(capsys)))


@pytest.mark.parametrize(
    ("args", "error"),
    [
        pytest.param(["--name", "Grove_Policy"], "invalid value 'Grove_Policy' for --name: must be a DNS subdomain", id="name"),
        pytest.param(["--exclude-namespace", "kube.system"], "'kube.system' is not one namespace name (a DNS label", id="namespace"),
        pytest.param(["--failure-policy", "Deny"], "argument --failure-policy: invalid choice: 'Deny'", id="failure-policy"),
    ],
)
def test_a_bad_option_is_one_line(capsys: pytest.CaptureFixture[str], args: list[str], error: str) -> None:
    assert main(["policy", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("webhook policy: error: ") and error in err and err.count("\n") == 1
