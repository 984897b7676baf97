"""The README's install in the selfSigned certificate mode (its controller command with the
``--set`` it names), told the namespace of the README's workload so that its RBAC is namespaced:
the README's checks as written, the Roles in that namespace rather than cluster-wide, and the
README's uninstall, which leaves no Role (in any namespace), Secret or Job behind."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from node import checks
from node.node import Node
from node.pods import NAMESPACE, RELEASE, wait_ready
from node.readme import Shell
from node.release import installed

NAMESPACED = ("--set", "server.namespaces={rs-demo}", "--set", "reconciler.namespaces={rs-demo}")


@pytest.fixture(scope="module")
def release(node: Node, shell: Shell, admin: client.ApiClient) -> Iterator[None]:
    shell(f"kubectl create namespace {checks.DEMO}")  # where the namespaced Roles go
    with installed(shell, admin, "selfSigned", *NAMESPACED):
        yield


def test_the_readmes_checks_pass_with_helm_s_certificate_and_namespaced_rbac(release: None, shell: Shell, admin: client.ApiClient) -> None:
    checks.readme_checks(shell, admin, namespace_made=True)
    rbac = client.RbacAuthorizationV1Api(admin)
    roles = {(r.metadata.namespace, r.metadata.name) for r in rbac.list_role_for_all_namespaces(
        label_selector=f"app.kubernetes.io/instance={RELEASE}").items}
    assert {("rs-demo", f"{RELEASE}-webhook-workloads"), ("rs-demo", f"{RELEASE}-reconciler-workloads")} <= roles, roles
    secret = client.CoreV1Api(admin).read_namespaced_secret(f"{RELEASE}-tls", NAMESPACE)
    assert secret.type == "kubernetes.io/tls" and secret.data["ca.crt"]


def test_an_upgrade_keeps_helm_s_certificate(release: None, shell: Shell, admin: client.ApiClient) -> None:
    """An upgrade of a value re-renders the certificate templates: the CA is kept (Helm looks the
    Secret up), so the rolled pods are trusted at once and Grove pods still get their claims."""
    before = client.CoreV1Api(admin).read_namespaced_secret(f"{RELEASE}-tls", NAMESPACE).data
    shell(f"helm upgrade {RELEASE} charts/grove-sharing-webhook --namespace {NAMESPACE} --reuse-values "
          f"--set server.logLevel=debug && kubectl -n {NAMESPACE} rollout status deployment/{RELEASE} --timeout=120s")
    assert client.CoreV1Api(admin).read_namespaced_secret(f"{RELEASE}-tls", NAMESPACE).data == before
    wait_ready(admin, 2)
    checks.check_denied(shell, validating=True)


def test_uninstall_leaves_nothing(release: None, shell: Shell, admin: client.ApiClient) -> None:
    checks.uninstall_leaves_nothing(shell, admin)
