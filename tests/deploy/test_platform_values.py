"""The values platform teams expect of a chart (the ones Kyverno's and cert-manager's have), each
rendered where it belongs: on the node's network, behind a NetworkPolicy, with extra options,
volumes and labels, annotated Services and webhooks, match conditions, an image from another
registry or pinned by digest, a disruption budget by maxUnavailable, tuned probes."""

from __future__ import annotations

import pytest

from deploy.served import settings_from_env
from webhook.cli import build_parser
from webhook.settings import ServeSettings

FULLNAME = "sharing-grove-sharing-webhook"


def pod_spec(installed) -> dict:
    return installed.one("Deployment")["spec"]["template"]["spec"]


def test_on_the_node_s_network_the_pods_use_the_chosen_ports_and_never_share_a_node(render, monkeypatch):
    installed = render({"hostNetwork": True, "server": {"port": 10250 + 3, "metricsPort": 10254}})
    pod = pod_spec(installed)
    assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    container = installed.container("webhook")
    settings = settings_from_env(container, ServeSettings, monkeypatch)
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"https": 10253, "metrics": 10254}
    assert (settings.port, settings.metrics_port) == (10253, 10254)
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    selector = installed.one("Deployment")["spec"]["selector"]["matchLabels"]
    assert anti == [{"topologyKey": "kubernetes.io/hostname",
                     "labelSelector": {"matchLabels": {**selector, "app.kubernetes.io/component": "webhook"}}}]


def test_on_the_node_s_network_the_anti_affinity_lets_the_uninstall_hook_onto_a_webhook_s_node(render):
    """The hook's pod carries the release's selector labels: an anti-affinity selecting those kept
    it off every node with a webhook pod, and on a cluster where each node runs one, `helm
    uninstall` failed and left both fail-closed configurations behind (issue 39)."""
    installed = render({"hostNetwork": True}).with_hooks()
    (anti,) = pod_spec(installed)["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    matches = anti["labelSelector"]["matchLabels"].items()
    webhook = installed.one("Deployment")["spec"]["template"]["metadata"]["labels"]
    hook = installed.one("Job")["spec"]["template"]["metadata"]["labels"]
    assert matches <= webhook.items() and not matches <= hook.items()


def test_off_the_node_s_network_by_default(default_install):
    assert "hostNetwork" not in pod_spec(default_install) and "affinity" not in pod_spec(default_install)


def test_a_network_policy_admits_the_webhook_and_metrics_ports_from_the_peers_given(render):
    api_server = [{"ipBlock": {"cidr": "10.0.0.0/16"}}]
    prometheus = [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]
    installed = render({"networkPolicy": {"enabled": True, "webhookFrom": api_server, "metricsFrom": prometheus}})
    policy = installed.one("NetworkPolicy")["spec"]
    assert policy["podSelector"] == installed.one("Deployment")["spec"]["selector"]
    assert policy["policyTypes"] == ["Ingress"]
    assert policy["ingress"] == [
        {"ports": [{"port": 8443, "protocol": "TCP"}], "from": api_server},
        {"ports": [{"port": 8444, "protocol": "TCP"}, {"port": 8081, "protocol": "TCP"}], "from": prometheus},
    ]


def test_a_network_policy_without_peers_admits_its_ports_from_anywhere_and_none_is_made_by_default(render, default_install):
    policy = render({"networkPolicy": {"enabled": True}}).one("NetworkPolicy")["spec"]
    assert all("from" not in rule for rule in policy["ingress"])
    assert default_install.of_kind("NetworkPolicy") == []


def test_extra_args_are_options_the_commands_accept(render):
    installed = render({"server": {"extraArgs": ["--body-timeout", "20"]},
                        "reconciler": {"extraArgs": ["--backoff-max=60"]}})
    for name, args in (("webhook", ["serve", "--body-timeout", "20"]), ("reconciler", ["reconcile", "--backoff-max=60"])):
        assert installed.container(name)["args"] == args
        build_parser().parse_args(args)


def test_extra_volumes_are_mounted_where_asked(render):
    volume = {"name": "trust", "configMap": {"name": "corp-ca"}}
    mount = {"name": "trust", "mountPath": "/etc/ssl/corp", "readOnly": True}
    installed = render({"extraVolumes": [volume], "extraVolumeMounts": [mount],
                        "reconciler": {"extraVolumes": [{"name": "scratch", "emptyDir": {}}],
                                       "extraVolumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]}})
    assert volume in pod_spec(installed)["volumes"] and {"name": "scratch", "emptyDir": {}} in pod_spec(installed)["volumes"]
    assert mount in installed.container("webhook")["volumeMounts"]
    assert installed.container("reconciler")["volumeMounts"] == [{"name": "scratch", "mountPath": "/scratch"}]


def test_common_labels_are_on_every_object_and_pod_but_no_selector(render):
    installed = render({"commonLabels": {"team": "platform"}, "reconciler": {"mode": "deployment"}}).with_hooks()
    for document in installed.documents:
        assert document["metadata"]["labels"]["team"] == "platform", document["kind"]
    for deployment in installed.of_kind("Deployment"):
        assert deployment["spec"]["template"]["metadata"]["labels"]["team"] == "platform"
        assert "team" not in deployment["spec"]["selector"]["matchLabels"]
    for service in installed.of_kind("Service"):
        assert "team" not in service["spec"]["selector"]


def test_service_annotations_are_the_service_s(render, default_install):
    annotations = {"service.beta.kubernetes.io/aws-load-balancer-internal": "true"}
    assert render({"service": {"annotations": annotations}}).one("Service")["metadata"]["annotations"] == annotations
    assert "annotations" not in default_install.one("Service")["metadata"]


@pytest.mark.parametrize("kind", ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"])
def test_webhook_annotations_are_on_both_configurations_beside_cert_manager_s(render, kind):
    annotations = {"argocd.argoproj.io/sync-wave": "5"}
    assert render({"webhooks": {"annotations": annotations}}).one(kind)["metadata"]["annotations"] == annotations
    both = render({"webhooks": {"annotations": annotations}, "certificates": {"mode": "certManager"}}).one(kind)
    assert both["metadata"]["annotations"] == {**annotations, "cert-manager.io/inject-ca-from": f"grove-system/{FULLNAME}-tls"}


@pytest.mark.parametrize(("kind", "key"), [("ValidatingWebhookConfiguration", "validating"),
                                           ("MutatingWebhookConfiguration", "mutating")])
def test_match_conditions_narrow_each_webhook(render, default_install, kind, key):
    conditions = [{"name": "not-system", "expression": "!request.userInfo.username.startsWith('system:node:')"}]
    installed = render({"webhooks": {key: {"matchConditions": conditions}}})
    assert installed.one(kind)["webhooks"][0]["matchConditions"] == conditions
    assert "matchConditions" not in default_install.one(kind)["webhooks"][0]


@pytest.mark.parametrize(("image", "global_values", "expected"), [
    ({"registry": "registry.example.com"}, {}, "registry.example.com/grove-sharing-webhook:0.1.0"),
    ({}, {"imageRegistry": "mirror.example.com/"}, "mirror.example.com/grove-sharing-webhook:0.1.0"),
    ({"registry": "registry.example.com"}, {"imageRegistry": "mirror.example.com"}, "registry.example.com/grove-sharing-webhook:0.1.0"),
    ({"digest": "sha256:" + "a" * 64}, {}, "grove-sharing-webhook:0.1.0@sha256:" + "a" * 64),
], ids=["registry", "global registry", "own registry first", "digest"])
def test_the_image_comes_from_the_registry_and_digest_given(render, image, global_values, expected):
    installed = render({"image": image, "global": global_values, "reconciler": {"mode": "deployment"}}).with_hooks()
    images = {c["image"] for d in installed.of_kind("Deployment") + installed.of_kind("Job")
              for c in d["spec"]["template"]["spec"]["containers"]}
    assert images == {expected}


def test_a_disruption_budget_may_say_how_many_may_go(render):
    budget = render({"podDisruptionBudget": {"maxUnavailable": "50%"}}).one("PodDisruptionBudget")["spec"]
    assert budget["maxUnavailable"] == "50%" and "minAvailable" not in budget


@pytest.mark.parametrize(("value", "container", "probe"), [
    ({"server": {"livenessProbe": {"periodSeconds": 30, "timeoutSeconds": 5}}}, "webhook", "livenessProbe"),
    ({"server": {"readinessProbe": {"failureThreshold": 6}}}, "webhook", "readinessProbe"),
    ({"reconciler": {"livenessProbe": {"initialDelaySeconds": 20}}}, "reconciler", "livenessProbe"),
])
def test_probe_overrides_are_merged_over_the_chart_s(render, default_install, value, container, probe):
    chart = default_install.container(container)[probe]
    override = next(iter(value.values()))[probe]
    assert render(value).container(container)[probe] == {**chart, **override}


def test_the_schema_takes_an_umbrella_chart_s_global_and_enabled(render):
    installed = render({"global": {"imageRegistry": "mirror.example.com", "storageClass": "fast"}, "enabled": True})
    assert installed.container("webhook")["image"].startswith("mirror.example.com/")

