"""``validation.mode``: the validating webhook (the default), the ValidatingAdmissionPolicy
``python -m webhook policy`` prints, or both; the pod webhook and the reconciler in every mode."""

from __future__ import annotations

import json

import pytest
import yaml

from deploy.chart import CHART
from deploy.helm import HelmError
from webhook.policy.command import documents
from webhook.policy import PolicySettings

NAMESPACE = "grove-system"
RELEASE = "sharing"
FULLNAME = "sharing-grove-sharing-webhook"
GENERATED = CHART / "files" / "validatingadmissionpolicy.json"
VALIDATING = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ValidatingWebhookConfiguration")


def installed_kinds(installed) -> dict[str, int]:
    return {kind: len(installed.of_kind(kind)) for kind in (*VALIDATING, "MutatingWebhookConfiguration", "Deployment")}


@pytest.mark.parametrize(
    ("mode", "policy", "webhook"),
    [
        pytest.param("webhook", 0, 1, id="webhook"),
        pytest.param("policy", 1, 0, id="policy"),
        pytest.param("both", 1, 1, id="both"),
    ],
)
def test_each_mode_installs_its_validation_beside_the_pod_webhook_and_the_reconciler(render, mode, policy, webhook):
    installed = render({"validation": {"mode": mode}})
    assert installed_kinds(installed) == {
        "ValidatingAdmissionPolicy": policy, "ValidatingAdmissionPolicyBinding": policy,
        "ValidatingWebhookConfiguration": webhook, "MutatingWebhookConfiguration": 1, "Deployment": 1,
    }
    assert installed.container("reconciler")


def test_the_default_is_the_validating_webhook(default_install):
    assert [kind for kind in VALIDATING if default_install.of_kind(kind)] == ["ValidatingWebhookConfiguration"]


def test_the_charts_copy_is_what_the_command_prints():
    """``python -m webhook policy --output json > charts/grove-sharing-webhook/files/validatingadmissionpolicy.json``
    brings it up to date."""
    assert GENERATED.read_text() == documents(PolicySettings(output="json"))


@pytest.mark.parametrize("failure_policy", ["Fail", "Ignore"])
def test_the_installed_policy_and_binding_are_the_commands_for_the_release(render, failure_policy):
    installed = render({"validation": {"mode": "policy", "policy": {"failurePolicy": failure_policy}}},
                       release=RELEASE, namespace=NAMESPACE)
    printed = list(yaml.safe_load_all(documents(PolicySettings(
        name=FULLNAME, failure_policy=failure_policy, exclude_namespace=[NAMESPACE, "kube-system"]))))
    for kind, expected in zip(VALIDATING, printed):
        document = installed.one(kind)
        assert document["metadata"].pop("labels")["app.kubernetes.io/instance"] == RELEASE
        assert document == expected


def test_the_binding_selector_adds_the_values_to_the_excluded_namespaces(render):
    selector = {"matchLabels": {"team": "ml"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}]}
    installed = render({"validation": {"mode": "both", "policy": {"namespaceSelector": selector}}}, namespace=NAMESPACE)
    chosen = installed.one("ValidatingAdmissionPolicyBinding")["spec"]["matchResources"]["namespaceSelector"]
    excluded = {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [NAMESPACE, "kube-system"]}
    assert chosen == {"matchLabels": {"team": "ml"}, "matchExpressions": [excluded, *selector["matchExpressions"]]}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        pytest.param({"validation": {"mode": "policy"}, "server": {"strict": True}},
                     "server.strict is the validating webhook's: with validation.mode policy nothing would apply it",
                     id="strict-without-the-webhook"),
        pytest.param({"validation": {"mode": "both"}, "server": {"templateAuthorization": "warn"}},
                     "validation.mode both needs server.templateAuthorization enforce", id="both-with-warn"),
        pytest.param({"validation": {"mode": "policy"}, "server": {"templateAuthorization": "off"}},
                     "validation.mode policy needs server.templateAuthorization enforce", id="policy-with-off"),
        pytest.param({"validation": {"mode": "cel"}}, "at '/validation/mode': value must be one of", id="unknown-mode"),
    ],
)
def test_settings_the_policy_cannot_honour_are_refused(render, values, message):
    with pytest.raises(HelmError, match=message.replace(".", r"\.")):
        render(values)


@pytest.mark.parametrize(("mode", "variable"), [("webhook", None), ("both", None), ("policy", "false")])
def test_the_certificate_controller_is_told_when_there_is_no_validating_webhook(render, mode, variable):
    """It keeps the caBundle of the configurations the release has (controller mode, the default)."""
    env = {e["name"]: e.get("value") for e in render({"validation": {"mode": mode}}).container("webhook")["env"]}
    assert env.get("WEBHOOK_VALIDATING_WEBHOOK") == variable


def test_strict_stays_with_the_webhook_when_both_run(render):
    installed = render({"validation": {"mode": "both"}, "server": {"strict": True}})
    env = {e["name"]: e.get("value") for e in installed.container("webhook")["env"]}
    assert env["WEBHOOK_STRICT"] == "true" and installed.of_kind("ValidatingAdmissionPolicy")


def test_the_generated_policy_is_a_list_kubectl_applies():
    generated = json.loads(GENERATED.read_text())
    assert (generated["apiVersion"], generated["kind"]) == ("v1", "List")
    assert [item["kind"] for item in generated["items"]] == list(VALIDATING[:2])
