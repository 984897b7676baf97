"""The chart grants each component exactly the API access its code declares (webhook/kube/access.py)."""

from __future__ import annotations

import pytest

from webhook.kube.access import ACCESS, Component, Reach

FULLNAME = "sharing-grove-sharing-webhook"
Grant = tuple[str, str, str]


def declared(component: Component, reach: Reach) -> set[Grant]:
    return {
        (rule.resource.group, rule.resource.plural, verb)
        for rule in ACCESS[component]
        if rule.reach is reach
        for verb in rule.verbs
    }


def granted(role: dict) -> set[Grant]:
    grants: set[Grant] = set()
    for rule in role["rules"]:
        assert set(rule) == {"apiGroups", "resources", "verbs"}, f"unexpected keys in {rule}"
        grants |= {(g, r, v) for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
    return grants


@pytest.mark.parametrize("component", list(Component), ids=str)
def test_the_cluster_role_of_each_component_is_its_access_table(default_install, component):
    role = default_install.one("ClusterRole", f"{FULLNAME}-{component}")
    assert granted(role) == declared(component, Reach.CLUSTER)


@pytest.mark.parametrize("component", list(Component), ids=str)
def test_the_namespaced_role_of_each_component_is_its_access_table(default_install, component):
    wanted = declared(component, Reach.OWN_NAMESPACE)
    roles = [r for r in default_install.of_kind("Role") if r["metadata"]["name"] == f"{FULLNAME}-{component}"]
    assert [granted(r) for r in roles] == ([wanted] if wanted else [])
    for role in roles:
        assert role["metadata"]["namespace"] == "grove-system"


def test_every_role_is_bound_to_the_pods_service_account_and_nothing_else_is_granted(default_install):
    account = default_install.one("Deployment")["spec"]["template"]["spec"]["serviceAccountName"]
    assert default_install.one("ServiceAccount")["metadata"]["name"] == account
    roles = default_install.of_kind("ClusterRole") + default_install.of_kind("Role")
    bindings = default_install.of_kind("ClusterRoleBinding") + default_install.of_kind("RoleBinding")
    bound = {}
    for binding in bindings:
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": "grove-system"}]
        bound[(binding["roleRef"]["kind"], binding["roleRef"]["name"])] = binding["kind"]
    assert bound == {
        ("ClusterRole", f"{FULLNAME}-webhook"): "ClusterRoleBinding",
        ("ClusterRole", f"{FULLNAME}-reconciler"): "ClusterRoleBinding",
        ("Role", f"{FULLNAME}-reconciler"): "RoleBinding",
    }
    assert sorted((r["kind"], r["metadata"]["name"]) for r in roles) == sorted(bound)


@pytest.mark.parametrize(
    ("values", "roles"),
    [
        ({"reconciler": {"enabled": False}}, [("ClusterRole", f"{FULLNAME}-webhook")]),
        ({"reconciler": {"leaderElect": False}},
         [("ClusterRole", f"{FULLNAME}-reconciler"), ("ClusterRole", f"{FULLNAME}-webhook")]),
    ],
    ids=["without the reconciler only the webhook's role", "without leader election no lease role"],
)
def test_access_follows_what_runs(render, values, roles):
    installed = render(values)
    found = installed.of_kind("ClusterRole") + installed.of_kind("Role")
    assert sorted((r["kind"], r["metadata"]["name"]) for r in found) == roles
    assert len(installed.of_kind("ClusterRoleBinding") + installed.of_kind("RoleBinding")) == len(roles)


def test_an_existing_service_account_gets_the_roles(render):
    installed = render({"serviceAccount": {"create": False, "name": "platform-sa"}})
    assert installed.of_kind("ServiceAccount") == []
    assert installed.one("Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == "platform-sa"
    for binding in installed.of_kind("ClusterRoleBinding") + installed.of_kind("RoleBinding"):
        assert binding["subjects"][0]["name"] == "platform-sa"
