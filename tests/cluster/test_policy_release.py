"""The chart with ``validation.mode=policy`` in its default certificate mode, on the real control
plane: no ValidatingWebhookConfiguration, the ValidatingAdmissionPolicy deciding PodCliqueSets, and
the pod webhook served with a certificate its server keeps through the one configuration there is
(``serve --no-validating-webhook``, as the chart's Deployment sets it).

A release of its own (namespace ``rs-policy-system``, everything selecting only ``rs-policy``,
which the session's release leaves alone: labelled ``decided-by: nobody``)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cluster import kube
from cluster.conftest import LOGS
from cluster.controlplane import ControlPlane
from cluster.pods import create, grove_pods
from cluster.release import DECIDED_BY, Release, install
from cluster.test_certificate_controller import mutations, selecting
from cluster.tools import Tool
from cluster.workloads import end_to_end
from core.podcliquesets import workload
from reconciler.grove import GroveOperator

WORKLOADS, NAMESPACE = "rs-policy", "rs-policy-system"


@pytest.fixture(scope="module")
def policy_release(control_plane: ControlPlane, admin: client.ApiClient, helm: Tool,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[Release]:
    workdir = tmp_path_factory.mktemp("policy-release")
    only = {"matchLabels": {"kubernetes.io/metadata.name": WORKLOADS}}
    values = workdir / "values.yaml"
    values.write_text(yaml.safe_dump(selecting(WORKLOADS) | {"validation": {"mode": "policy", "policy": {"namespaceSelector": only}}}))
    client.CoreV1Api(admin).create_namespace({"metadata": {"name": WORKLOADS, "labels": {DECIDED_BY: "nobody"}}})
    release = install(helm, admin, control_plane, "policy", NAMESPACE, workdir, "-f", str(values))
    release.server = release.server_at(release.server.port, workdir / "certs", workdir / "serve.log", "--no-validating-webhook")
    LOGS.append(release.server.log)
    release.server.start()
    try:
        yield release
    finally:
        if release.server.running():
            release.server.stop()
        helm("uninstall", release.name, "--namespace", NAMESPACE, "--no-hooks")


def test_it_installs_the_policy_and_no_validating_webhook(admin: client.ApiClient, policy_release: Release) -> None:
    registration = client.AdmissionregistrationV1Api(admin)
    with pytest.raises(ApiException) as missing:
        registration.read_validating_webhook_configuration(policy_release.fullname)
    assert missing.value.status == 404
    binding = registration.read_validating_admission_policy_binding(policy_release.fullname)
    assert binding.spec.policy_name == policy_release.fullname
    assert registration.read_validating_admission_policy(policy_release.fullname).spec.validations


def test_the_policy_decides_podcliquesets_and_the_pod_webhook_injects_claims(admin: client.ApiClient, policy_release: Release) -> None:
    """The server trusts its certificate once the mutating configuration has its CA: it gets ready,
    and the API server calls it for Grove pods."""
    denied = copy.deepcopy(workload())
    denied["metadata"]["namespace"] = WORKLOADS
    denied["spec"]["template"]["resourceSharing"][0]["name"] = ""

    def refusal() -> str | None:
        """The API server's refusal, once it has loaded the release's policy (through its watch)."""
        try:
            kube.custom(admin).create_namespaced_custom_object("grove.io", "v1alpha1", WORKLOADS, "podcliquesets", denied, dry_run="All")
        except ApiException as err:
            return str(json.loads(err.body)["message"])
        return None

    assert kube.wait_for(refusal, "the release's policy to deny") == (
        f'podcliquesets.grove.io "rs-test" is forbidden: ValidatingAdmissionPolicy \'{policy_release.fullname}\' with binding '
        f"'{policy_release.fullname}' denied request: spec.template.resourceSharing[0].name: Required value: reference name is required"
    )
    pcs: GroveOperator = end_to_end(admin, WORKLOADS)
    before = mutations((policy_release.server,))
    assert create(admin, copy.deepcopy(grove_pods(pcs)[0]))["spec"]["resourceClaims"]
    assert mutations((policy_release.server,)) == before + 1, "the API server called the release's pod webhook"
