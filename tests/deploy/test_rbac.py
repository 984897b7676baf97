"""The chart grants each component exactly the API access its code declares (webhook/kube/access.py):
cluster-wide, or in Roles of the namespaces the components are told to watch, by name where the
code touches only named objects, bound to the ServiceAccount the component runs as."""

from __future__ import annotations

import pytest

from webhook.kube.access import ACCESS, Component, Reach

FULLNAME = "sharing-grove-sharing-webhook"
RELEASE_NAMESPACE = "grove-system"
NAMES = {Component.CERTIFICATES: {"secrets": [f"{FULLNAME}-certificate"], None: [FULLNAME]}, Component.UNREGISTER: {None: [FULLNAME]}}
"""The objects a component's named rules are about (by resource; None: any other)."""
Grant = tuple[str, str, str, tuple[str, ...]]
IN_CHART = tuple(component for component in Component if component is not Component.STATUS)
"""The components the chart runs and writes RBAC for: all but ``webhook status``, run by a person."""


def declared(component: Component, *reaches: Reach) -> set[Grant]:
    grants = set()
    for rule in ACCESS[component]:
        if rule.reach not in reaches:
            continue
        names = NAMES[component].get(rule.resource.plural, NAMES[component][None]) if rule.named else []
        grants |= {(rule.resource.group, rule.resource.plural, verb, tuple(names)) for verb in rule.verbs}
    return grants


def granted(role: dict) -> set[Grant]:
    grants: set[Grant] = set()
    for rule in role["rules"]:
        assert set(rule) <= {"apiGroups", "resources", "verbs", "resourceNames"}, f"unexpected keys in {rule}"
        names = tuple(rule.get("resourceNames", ()))
        grants |= {(g, r, v, names) for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
    return grants


def roles(installed) -> dict[tuple[str, str, str], dict]:
    """Every ClusterRole and Role by (kind, name, namespace), the pre-delete hook's included."""
    installed = installed.with_hooks()
    found = installed.of_kind("ClusterRole") + installed.of_kind("Role")
    return {(r["kind"], r["metadata"]["name"], r["metadata"].get("namespace", "")): r for r in found}


def expected(component: Component, namespaces: list[str]) -> dict[tuple[str, str, str], set[Grant]]:
    """The roles of one component: workload rules in Roles of ``namespaces``, or cluster-wide."""
    name = f"{FULLNAME}-{component}"
    cluster = declared(component, Reach.CLUSTER) | (set() if namespaces else declared(component, Reach.WORKLOAD))
    wanted = {("ClusterRole", name, ""): cluster} if cluster else {}
    for namespace in namespaces:
        wanted[("Role", f"{name}-workloads", namespace)] = declared(component, Reach.WORKLOAD)
    if own := declared(component, Reach.OWN_NAMESPACE):
        wanted[("Role", name, RELEASE_NAMESPACE)] = own
    return wanted


def rendered_for(installed, component: Component) -> dict[tuple[str, str, str], set[Grant]]:
    prefix = f"{FULLNAME}-{component}"
    return {key: granted(role) for key, role in roles(installed).items() if key[1] in (prefix, f"{prefix}-workloads")}


@pytest.mark.parametrize("component", IN_CHART, ids=str)
def test_each_component_s_roles_are_its_access_table(default_install, component):
    assert rendered_for(default_install, component) == expected(component, [])


NAMESPACED = {"server": {"namespaces": ["team-a", "team-b"]}, "reconciler": {"namespaces": ["team-a", "team-c"]}}


@pytest.mark.parametrize("component", IN_CHART, ids=str)
def test_told_their_namespaces_the_components_get_roles_there_and_only_the_cluster_scoped_rest_cluster_wide(render, component):
    """SubjectAccessReviews are cluster-scoped, and PodCliqueSets may name templates of any
    namespace: those stay in ClusterRoles; the rest of the workload access is in Roles."""
    workload = {Component.WEBHOOK: ["team-a", "team-b"], Component.RECONCILER: ["team-a", "team-c"]}.get(component, [])
    assert rendered_for(render(NAMESPACED), component) == expected(component, workload)


def test_namespaced_roles_leave_only_what_cannot_be_namespaced_cluster_wide(render):
    cluster = {key[1]: granted(role) for key, role in roles(render(NAMESPACED)).items() if key[0] == "ClusterRole"}
    assert cluster[f"{FULLNAME}-webhook"] == {
        ("authorization.k8s.io", "subjectaccessreviews", "create", ()),
        ("resource.k8s.io", "resourceclaimtemplates", "get", ()),
    }
    assert cluster[f"{FULLNAME}-reconciler"] == {("resource.k8s.io", "resourceclaimtemplates", "get", ())}


def test_named_objects_are_granted_by_name_only(default_install):
    """The certificate controller may read and update its Secret and the two configurations, and
    the hook delete the two, and nothing else of those kinds (create cannot be limited to a name:
    the chart makes the Secret)."""
    for key, role in roles(default_install).items():
        for rule in role["rules"]:
            if {"secrets", "validatingwebhookconfigurations", "mutatingwebhookconfigurations"} & set(rule["resources"]):
                assert rule.get("resourceNames"), f"{key} grants {rule} to any name"
                assert "create" not in rule["verbs"]


def bindings(installed) -> dict[tuple[str, str, str], list[dict]]:
    installed = installed.with_hooks()
    found = installed.of_kind("ClusterRoleBinding") + installed.of_kind("RoleBinding")
    return {(b["roleRef"]["kind"], b["roleRef"]["name"], b["metadata"].get("namespace", "")): b["subjects"] for b in found}


def subject(name: str) -> list[dict]:
    return [{"kind": "ServiceAccount", "name": name, "namespace": RELEASE_NAMESPACE}]


@pytest.mark.parametrize(("values", "accounts"), [
    ({}, {"webhook": FULLNAME, "certificates": FULLNAME, "reconciler": FULLNAME, "unregister": f"{FULLNAME}-unregister"}),
    ({"reconciler": {"mode": "deployment"}},
     {"webhook": FULLNAME, "certificates": FULLNAME, "reconciler": f"{FULLNAME}-reconciler", "unregister": f"{FULLNAME}-unregister"}),
], ids=["sidecar", "reconciler deployment"])
def test_every_role_is_bound_to_the_service_account_its_component_runs_as(render, values, accounts):
    installed = render(values)
    bound = bindings(installed)
    assert set(bound) == set(roles(installed)), "a role without a binding, or the other way round"
    for (kind, name, namespace), subjects in bound.items():
        component = name.removeprefix(f"{FULLNAME}-").removesuffix("-workloads")
        assert subjects == subject(accounts[component]), (kind, name)
    accounts_made = {a["metadata"]["name"] for a in installed.with_hooks().of_kind("ServiceAccount")}
    assert set(accounts.values()) <= accounts_made


@pytest.mark.parametrize(
    ("values", "components"),
    [
        ({"reconciler": {"enabled": False}}, {"webhook", "certificates", "unregister"}),
        ({"certificates": {"mode": "selfSigned"}}, {"webhook", "reconciler", "unregister"}),
        ({"unregisterHook": {"enabled": False}}, {"webhook", "certificates", "reconciler"}),
    ],
    ids=["without the reconciler no reconciler role", "without the controller no certificate role", "without the hook no hook role"],
)
def test_access_follows_what_runs(render, values, components):
    installed = render(values)
    found = {key[1].removeprefix(f"{FULLNAME}-").removesuffix("-workloads") for key in roles(installed)}
    assert found == components


def test_without_leader_election_no_lease_role(render):
    installed = render({"reconciler": {"leaderElect": False}})
    assert ("Role", f"{FULLNAME}-reconciler", RELEASE_NAMESPACE) not in roles(installed)


def test_rbac_create_false_leaves_every_grant_to_the_user(render):
    installed = render({"rbac": {"create": False}})
    kinds = {d["kind"] for d in installed.with_hooks().documents}
    assert not {"ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"} & kinds
    assert installed.of_kind("ServiceAccount")  # the accounts to grant to are still made


def test_an_existing_service_account_gets_the_roles(render):
    installed = render({"serviceAccount": {"create": False, "name": "platform-sa"}})
    assert [a["metadata"]["name"] for a in installed.with_hooks().of_kind("ServiceAccount")] == [f"{FULLNAME}-unregister"]
    assert installed.one("Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == "platform-sa"
    for (_, name, _), subjects in bindings(installed).items():
        if not name.endswith("-unregister"):
            assert subjects[0]["name"] == "platform-sa"
