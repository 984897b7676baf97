"""The README's install in the existingSecret certificate mode, as it shows it (a CA and serving
certificate made by the ``certs`` command, a ``kubernetes.io/tls`` Secret, the CA given in
values), with the webhook on the node's network (``hostNetwork=true``; one replica, as one node
holds one pod on the node's ports): the README's checks as written, the API server calling the
webhook at the node's address, and the README's uninstall, whose pre-delete hook must be
scheduled onto the node that runs the webhook pod (issue 39: the Deployment's required
anti-affinity kept it off, and the uninstall left both fail-closed configurations behind)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from node import checks
from node.host import NODE_IP
from node.node import Node
from node.pods import wait_ready
from node.readme import Shell
from node.release import installed

HOST_NETWORK = ("--set", "hostNetwork=true", "--set", "replicaCount=1")


@pytest.fixture(scope="module")
def release(node: Node, shell: Shell, admin: client.ApiClient) -> Iterator[None]:
    with installed(shell, admin, "existingSecret", *HOST_NETWORK):
        yield


def test_the_readmes_checks_pass_with_its_certificate_on_the_node_s_network(release: None, shell: Shell, admin: client.ApiClient) -> None:
    checks.readme_checks(shell, admin, pods=1)
    (pod,) = wait_ready(admin, 1)
    assert pod.spec.host_network and pod.status.pod_ip == NODE_IP


def test_uninstall_on_the_node_s_network_leaves_nothing(release: None, shell: Shell, admin: client.ApiClient) -> None:
    checks.uninstall_leaves_nothing(shell, admin)
