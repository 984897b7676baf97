"""When no webhook answers, as the real API server handles it: with the chart's default failure
policy the API server refuses PodCliqueSets and Grove pods ("failed calling webhook") and takes them
again once the server is back; with ``failurePolicy: Ignore`` it admits them meanwhile. The second
case is set by ``helm upgrade``, which must leave alone the certificate the server keeps in its
Secret and the CA it wrote into both webhook configurations."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable, Iterator
from typing import TypeVar, cast

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cluster import kube
from cluster.pods import create, grove_pods
from cluster.release import CHART, Release
from cluster.tools import Tool
from core.workload import workload_pcs_raw
from reconciler.grove import GroveOperator

VALIDATING = "resource-sharing.pcs.validating.webhooks.grove.io"
MUTATING = "resource-sharing.pod.mutating.webhooks.grove.io"
T = TypeVar("T")


def create_pcs(admin: client.ApiClient, namespace: str) -> None:
    pcs = workload_pcs_raw(1, namespace)
    pcs["metadata"]["name"] = "outage-check"
    kube.custom(admin).create_namespaced_custom_object("grove.io", "v1alpha1", namespace, "podcliquesets", pcs, dry_run="All")


def refusal(call: object) -> str:
    """The message of the API server's refusal of ``call()``."""
    with pytest.raises(ApiException) as refused:
        call()  # type: ignore[operator]
    return str(json.loads(refused.value.body)["message"])


def admitted(call: Callable[[], T]) -> T | None:
    """What ``call()`` returns, or None when the API server could not call a webhook."""
    try:
        return call() or cast(T, True)
    except ApiException as err:
        if "failed calling webhook" in str(err.body):
            return None
        raise


@pytest.fixture
def stopped(release: Release) -> Iterator[Release]:
    """The webhook server stopped for the test, started again after it."""
    assert release.server.stop() == 0
    try:
        yield release
    finally:
        if not release.server.running():
            release.server.start()


def test_with_no_webhook_answering_creates_fail_and_succeed_once_it_is_back(
    workload: GroveOperator, admin: client.ApiClient, stopped: Release
) -> None:
    pod = grove_pods(workload)[0]
    message = refusal(lambda: create_pcs(admin, workload.namespace))
    assert message.startswith(f'Internal error occurred: failed calling webhook "{VALIDATING}"'), message
    message = refusal(lambda: create(admin, copy.deepcopy(pod)))
    assert message.startswith(f'Internal error occurred: failed calling webhook "{MUTATING}"'), message

    stopped.server.start()
    create_pcs(admin, workload.namespace)
    assert create(admin, pod)["spec"]["resourceClaims"]


def secret_and_bundles(admin: client.ApiClient, release: Release) -> tuple[dict[str, str], set[str]]:
    secret = client.CoreV1Api(admin).read_namespaced_secret(release.secret, release.namespace).data
    registration = client.AdmissionregistrationV1Api(admin)
    configurations = [registration.read_validating_webhook_configuration(release.fullname),
                      registration.read_mutating_webhook_configuration(release.fullname)]
    bundles = {w.client_config.ca_bundle for c in configurations for w in c.webhooks}
    return dict(secret), bundles


def test_with_failure_policy_ignore_they_are_admitted_and_upgrades_keep_the_certificate(
    workload: GroveOperator, admin: client.ApiClient, helm: Tool, release: Release
) -> None:
    before = secret_and_bundles(admin, release)
    assert before[1] == {base64.b64encode(release.ca_bundle()).decode()} == {before[0]["ca.crt"]}
    ignore = ["--set", "webhooks.validating.failurePolicy=Ignore", "--set", "webhooks.mutating.failurePolicy=Ignore"]
    helm("upgrade", release.name, str(CHART), "--namespace", release.namespace, *release.values, *ignore)
    try:
        assert secret_and_bundles(admin, release) == before
        assert release.server.stop() == 0
        try:
            # The API server sees the upgraded configurations through its watch, a moment later.
            kube.wait_for(lambda: admitted(lambda: create_pcs(admin, workload.namespace)), "the PodCliqueSet admitted")
            pod = kube.wait_for(lambda: admitted(lambda: create(admin, grove_pods(workload)[0])), "the pod admitted")
            assert "resourceClaims" not in pod["spec"]
        finally:
            release.server.start()
    finally:
        helm("upgrade", release.name, str(CHART), "--namespace", release.namespace, *release.values)
    assert secret_and_bundles(admin, release) == before
    assert create(admin, grove_pods(workload)[0])["spec"]["resourceClaims"]
