"""Both webhook configurations register what the server serves, the way DECISIONS.md §6 says."""

from __future__ import annotations

import json

import pytest

from deploy.helm import HelmError
from deploy.served import call
from webhook.settings import ServeSettings
from webhook.webhooks import WEBHOOKS

NAMESPACE = "grove-system"
EXCLUDED = {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [NAMESPACE, "kube-system"]}
GROVE_PODS = {"matchExpressions": [{"key": "grove.io/podclique", "operator": "Exists"}]}

RULES = {
    "ValidatingWebhookConfiguration": {
        "apiGroups": ["grove.io"], "apiVersions": ["v1alpha1"], "resources": ["podcliquesets"],
        "operations": ["CREATE", "UPDATE"], "scope": "Namespaced",
    },
    "MutatingWebhookConfiguration": {
        "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
        "operations": ["CREATE"], "scope": "Namespaced",
    },
}
KINDS = {"ValidatingWebhookConfiguration": "PodCliqueSet", "MutatingWebhookConfiguration": "Pod"}
CONFIGURATIONS = sorted(RULES)
NAMES = {
    "ValidatingWebhookConfiguration": "resource-sharing.pcs.validating.webhooks.grove.io",
    "MutatingWebhookConfiguration": "resource-sharing.pod.mutating.webhooks.grove.io",
}
SCALE = "resource-sharing.scale.validating.webhooks.grove.io"
"""The scale webhook, beside the PodCliqueSet one in the validating configuration (DECISIONS.md §3.3)."""
WEBHOOKS_OF = {"ValidatingWebhookConfiguration": [NAMES["ValidatingWebhookConfiguration"], SCALE],
               "MutatingWebhookConfiguration": [NAMES["MutatingWebhookConfiguration"]]}


def webhook_of(installed, configuration: str, name: str | None = None) -> dict:
    webhooks = installed.one(configuration)["webhooks"]
    assert [w["name"] for w in webhooks] == WEBHOOKS_OF[configuration]
    return next(w for w in webhooks if w["name"] == (name or NAMES[configuration]))


def test_scale_updates_of_grove_objects_go_to_the_scale_webhook(default_install):
    """What ``kubectl scale`` and autoscalers write; an outage never holds them up (Ignore), and the
    PodCliqueSet webhook's matchConditions, written for PodCliqueSets, are not applied to Scales."""
    installed = default_install
    scale = webhook_of(installed, "ValidatingWebhookConfiguration", SCALE)
    assert scale["rules"] == [{
        "apiGroups": ["grove.io"], "apiVersions": ["v1alpha1"],
        "resources": ["podcliques/scale", "podcliquescalinggroups/scale", "podcliquesets/scale"],
        "operations": ["UPDATE"], "scope": "Namespaced",
    }]
    served = {webhook.path: webhook.kind for webhook in WEBHOOKS}
    assert served[scale["clientConfig"]["service"]["path"]] == "Scale"
    assert (scale["failurePolicy"], scale["timeoutSeconds"], scale["sideEffects"]) == ("Ignore", 10, "None")
    assert scale["namespaceSelector"] == {"matchExpressions": [EXCLUDED]}


def test_the_scale_webhook_has_its_own_failure_policy_and_no_match_conditions(render):
    conditions = [{"name": "not-ci", "expression": "request.userInfo.username != 'ci'"}]
    installed = render({"webhooks": {"scale": {"failurePolicy": "Fail"}, "validating": {"matchConditions": conditions}}})
    scale = webhook_of(installed, "ValidatingWebhookConfiguration", SCALE)
    assert scale["failurePolicy"] == "Fail" and "matchConditions" not in scale
    assert webhook_of(installed, "ValidatingWebhookConfiguration")["matchConditions"] == conditions


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_the_rules_send_exactly_the_operations_each_webhook_decides(default_install, configuration):
    assert webhook_of(default_install, configuration)["rules"] == [RULES[configuration]]


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_the_service_path_is_the_servers_webhook_for_that_kind(default_install, configuration):
    path = webhook_of(default_install, configuration)["clientConfig"]["service"]["path"]
    served = {webhook.path: webhook.kind for webhook in WEBHOOKS}
    assert served.get(path) == KINDS[configuration], f"{path} is not the server's {KINDS[configuration]} webhook"


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_the_endpoint_at_that_path_refuses_any_other_kind(default_install, configuration):
    """The server's own check of the kind agrees with what the configuration sends it."""
    path = webhook_of(default_install, configuration)["clientConfig"]["service"]["path"]
    other = {"group": "", "version": "v1", "kind": "ConfigMap"}
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "5d1b6a0e", "kind": other, "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "operation": "CREATE", "namespace": "team-a",
        "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "team-a"}},
    }}
    response = call(ServeSettings(), "POST", path, json.dumps(review).encode())
    assert response.status_code == 200
    answer = response.json()["response"]
    assert answer["uid"] == "5d1b6a0e" and answer["allowed"] is False
    assert KINDS[configuration] in answer["status"]["message"]


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_the_api_server_calls_the_service_on_its_https_port(default_install, configuration):
    service = default_install.one("Service")
    called = webhook_of(default_install, configuration)["clientConfig"]["service"]
    assert (called["name"], called["namespace"]) == (service["metadata"]["name"], NAMESPACE)
    https = next(p for p in service["spec"]["ports"] if p["name"] == "https")
    assert called["port"] == https["port"] == 443
    assert https["targetPort"] == "https"


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_no_side_effects_v1_reviews_and_the_policies_from_values(default_install, configuration):
    webhook = webhook_of(default_install, configuration)
    assert webhook["sideEffects"] == "None"
    assert webhook["admissionReviewVersions"] == ["v1"]
    assert webhook["matchPolicy"] == "Exact"
    assert (webhook["failurePolicy"], webhook["timeoutSeconds"]) == ("Fail", 10)


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_the_release_namespace_and_kube_system_are_never_sent_to_the_webhooks(default_install, configuration):
    assert webhook_of(default_install, configuration)["namespaceSelector"] == {"matchExpressions": [EXCLUDED]}


def test_only_grove_pods_are_sent_to_the_pod_webhook_and_again_after_later_mutations(default_install):
    webhook = webhook_of(default_install, "MutatingWebhookConfiguration")
    assert webhook["objectSelector"] == GROVE_PODS
    assert webhook["reinvocationPolicy"] == "IfNeeded"
    assert "objectSelector" not in webhook_of(default_install, "ValidatingWebhookConfiguration")


@pytest.mark.parametrize(
    ("name", "overrides"),
    [("validating", {"failurePolicy": "Ignore", "timeoutSeconds": 5}),
     ("mutating", {"failurePolicy": "Ignore", "timeoutSeconds": 3})],
    ids=["validating", "mutating"],
)
def test_failure_policy_and_timeout_are_configurable_per_webhook(render, name, overrides):
    installed = render({"webhooks": {name: overrides}})
    configuration = {"validating": "ValidatingWebhookConfiguration", "mutating": "MutatingWebhookConfiguration"}
    changed = webhook_of(installed, configuration[name])
    assert (changed["failurePolicy"], changed["timeoutSeconds"]) == (overrides["failurePolicy"], overrides["timeoutSeconds"])
    other = webhook_of(installed, configuration["mutating" if name == "validating" else "validating"])
    assert (other["failurePolicy"], other["timeoutSeconds"]) == ("Fail", 10)


def test_a_users_object_selector_narrows_the_chart_one(render):
    installed = render({"webhooks": {"mutating": {"objectSelector": {
        "matchLabels": {"team": "a"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]}}}})
    assert webhook_of(installed, "MutatingWebhookConfiguration")["objectSelector"] == {
        "matchLabels": {"team": "a"},
        "matchExpressions": [GROVE_PODS["matchExpressions"][0], {"key": "tier", "operator": "Exists"}],
    }


def test_a_users_namespace_selector_narrows_the_chart_one(render):
    selector = {"matchLabels": {"grove-sharing": "enabled"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}]}
    installed = render({"webhooks": {"validating": {"namespaceSelector": selector},
                                      "mutating": {"namespaceSelector": selector}}})
    for configuration in CONFIGURATIONS:
        assert webhook_of(installed, configuration)["namespaceSelector"] == {
            "matchLabels": {"grove-sharing": "enabled"},
            "matchExpressions": [EXCLUDED, {"key": "tier", "operator": "In", "values": ["gpu"]}],
        }


def test_the_release_namespace_is_excluded_wherever_the_release_goes(render):
    installed = render(namespace="kube-system")
    for configuration in CONFIGURATIONS:
        assert webhook_of(installed, configuration)["namespaceSelector"]["matchExpressions"] == [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}
        ]


@pytest.mark.parametrize("url", ["https://127.0.0.1:9443", "https://127.0.0.1:9443/", "https://dev.example.com:9443"])
def test_a_server_outside_the_cluster_is_called_at_its_url_and_no_workload_is_installed(render, url):
    """``webhooks.url``, as envtest points webhooks at a local server: each configuration calls
    that server at the webhook's path, and the chart leaves running it to the user."""
    installed = render({"webhooks": {"url": url}})
    for configuration in CONFIGURATIONS:
        client_config = webhook_of(installed, configuration)["clientConfig"]
        path = next(w.path for w in WEBHOOKS if w.kind == KINDS[configuration])
        assert client_config == {"url": f"{url.rstrip('/')}{path}"}
    kinds = {document["kind"] for document in installed.documents}
    assert not {"Deployment", "Service", "PodDisruptionBudget"} & kinds
    assert {"ServiceAccount", "ClusterRole", "Secret"} <= kinds


@pytest.mark.parametrize("url", ["http://127.0.0.1:9443", "https://127.0.0.1:9443/webhooks", "https://x?y=1"])
def test_a_url_that_is_not_a_bare_https_base_is_refused(render, url):
    with pytest.raises(HelmError, match="webhooks.url"):
        render({"webhooks": {"url": url}})
