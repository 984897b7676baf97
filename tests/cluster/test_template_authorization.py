"""Who may name a template of another namespace, decided by the real API server's RBAC: a
PodCliqueSet naming ``rs-shared/ext-ns-tpl``, applied with ``kubectl`` by users who may all create
PodCliqueSets in their namespace, is admitted for a user a RoleBinding lets read that template (or
whose group it lets), and denied for one it does not, with the documented message. The webhook
asks through SubjectAccessReviews, the only thing its ServiceAccount is granted for this; the
ValidatingAdmissionPolicy, in the namespace where it alone decides, asks the API server's own
authorizer, and decides alike."""

from __future__ import annotations

import json

import pytest
import yaml
from kubernetes import client

from cluster import kube
from cluster.controlplane import ControlPlane
from cluster.release import DECIDED_BY, Release
from cluster.tools import Tool
from core.workload import workload_pcs_raw

ENTRY = "spec.template.cliques[0].resourceSharing[1].namespace"
DECIDERS = {
    "team-a": 'admission webhook "resource-sharing.pcs.validating.webhooks.grove.io" denied the request: ',
    "team-a-policy": "{pcs} is forbidden: ValidatingAdmissionPolicy '{release}' with binding '{release}' denied request: ",
}
"""Where the webhook decides and where the policy does, with how the API server words a denial of each."""


def role_and_binding(namespace: str, name: str, rule: dict[str, object], subject: dict[str, str]) -> list[dict[str, object]]:
    return [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": name, "namespace": namespace},
         "rules": [rule]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": name, "namespace": namespace},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", **subject}]},
    ]


@pytest.fixture(scope="module")
def rbac(admin: client.ApiClient, kubectl: Tool) -> None:
    """Everyone in ``authors`` may create PodCliqueSets in team-a and team-a-policy; alice, and the
    group ml-team, may read the templates of rs-shared."""
    for namespace in ("team-a", "rs-shared"):
        kube.create_namespace(admin, namespace)
    client.CoreV1Api(admin).create_namespace({"metadata": {"name": "team-a-policy", "labels": {DECIDED_BY: "policy"}}})
    documents = [
        *(document for namespace in DECIDERS for document in role_and_binding(
            namespace, "pcs-authors", {"apiGroups": ["grove.io"], "resources": ["podcliquesets"], "verbs": ["create", "get"]},
            {"kind": "Group", "name": "authors"})),
        *role_and_binding("rs-shared", "template-readers", {"apiGroups": ["resource.k8s.io"],
                                                            "resources": ["resourceclaimtemplates"], "verbs": ["get"]},
                          {"kind": "User", "name": "alice"}),
        *role_and_binding("rs-shared", "team-template-readers", {"apiGroups": ["resource.k8s.io"],
                                                                 "resources": ["resourceclaimtemplates"], "verbs": ["get"]},
                          {"kind": "Group", "name": "ml-team"}),
    ]
    # The workload's external templates, so that no warning says one is missing (DECISIONS.md §3.4).
    documents += [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                   "metadata": {"name": name, "namespace": namespace}, "spec": {"spec": {}}}
                  for namespace, name in [*((n, "ext-tpl") for n in DECIDERS), ("rs-shared", "ext-ns-tpl")]]
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(documents))


def apply_as(control_plane: ControlPlane, kubectl: Tool, user: str, groups: tuple[str, ...], namespace: str,
             name: str) -> tuple[int, str]:
    pcs = workload_pcs_raw(1, namespace)
    pcs["metadata"]["name"] = name
    done = kubectl.as_user(control_plane.kubeconfig(user, groups))("create", "-f", "-", input=json.dumps(pcs), check=False)
    return done.returncode, done.stderr.strip()


@pytest.mark.parametrize("namespace", DECIDERS)
@pytest.mark.parametrize(("user", "groups"), [("alice", ("authors",)), ("carol", ("authors", "ml-team"))])
def test_a_user_who_may_read_the_template_is_admitted(
    control_plane: ControlPlane, kubectl: Tool, release: Release, rbac: None, user: str, groups: tuple[str, ...], namespace: str
) -> None:
    assert apply_as(control_plane, kubectl, user, groups, namespace, f"by-{user}") == (0, "")


@pytest.mark.parametrize("namespace", DECIDERS)
def test_a_user_who_may_not_is_denied_with_the_documented_message(
    control_plane: ControlPlane, kubectl: Tool, release: Release, rbac: None, namespace: str
) -> None:
    code, stderr = apply_as(control_plane, kubectl, "bob", ("authors",), namespace, "by-bob")
    assert code == 1
    denied = DECIDERS[namespace].format(pcs='podcliquesets.grove.io "by-bob"', release=release.name)
    assert stderr == (
        f'Error from server (Forbidden): error when creating "STDIN": {denied}'
        f'{ENTRY}: Forbidden: user "bob" may not get ResourceClaimTemplate "rs-shared/ext-ns-tpl"; '
        "a template of another namespace may be used only by users who may read it"
    )
