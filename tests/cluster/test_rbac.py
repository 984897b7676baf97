"""The chart's RBAC is exactly what the components use, as the real API server's audit log shows:
a scenario that takes every path that calls the API server (scale-ins at every level, a claim of
the desired name made by someone else, a missing template reported twice, a Grove pod whose
PodCliqueSet is not cached), then every request the release's ServiceAccount made in the whole run:
none refused (but while kube-apiserver was starting, when it refuses everything RBAC would allow), and for each component the (group, resource, verb) it used are the ones the chart's
rules grant it (from the access table the chart is written from, ``webhook.kube.access.ACCESS``)."""

from __future__ import annotations

import json
from collections import defaultdict

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cluster import audit, kube
from cluster.controlplane import ControlPlane
from cluster.groveapi import ClusterApi
from cluster.pods import create
from cluster.processes import Command
from cluster.release import Release
from cluster.workloads import INITIAL, end_to_end, wait_for_claims
from core.workload import grove_pod, workload_pcs_raw
from reconciler.e2e import STEPS
from webhook.kube.access import ACCESS, Component

NAMESPACE = "rs-rbac"
GRANTED = {component.value: {(rule.resource.group, rule.resource.plural, verb) for rule in rules for verb in rule.verbs}
           for component, rules in ACCESS.items() if component not in (Component.UNREGISTER, Component.STATUS)}
"""What the session's release runs: its webhook (with the certificate controller) and reconciler;
the pre-delete hook runs in test_uninstall.py, whose release is another."""


def solo(name: str, sharing: list[dict[str, str]], templates: list[str]) -> dict[str, object]:
    return {"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"replicas": 1, "template": {
                "resourceClaimTemplates": [{"name": t, "templateSpec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}} for t in templates],
                "resourceSharing": sharing,
                "cliques": [{"name": "w", "spec": {"roleName": "w", "replicas": 1, "podSpec": {
                    "containers": [{"name": "w", "image": "busybox"}]}}}]}}}


def exercise(admin: client.ApiClient) -> None:
    """Every path of both components that calls the API server."""
    api = ClusterApi(admin)
    grove = end_to_end(admin, NAMESPACE)
    wait_for_claims(api, NAMESPACE, INITIAL)
    for step in STEPS[1:]:  # scale-ins at every level: stale claims deleted after reading their owner
        step.act(grove)
        wait_for_claims(api, NAMESPACE, step.count)
    # A claim of the desired name that the reconciler does not watch (no Grove labels): its create
    # conflicts, it is read, and adopted.
    api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "adopted-all-tpl", "namespace": NAMESPACE},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}})
    api.create(solo("adopted", [{"name": "tpl", "scope": "AllReplicas"}], ["tpl"]))
    kube.wait_for(lambda: (api.get("resourceclaims", NAMESPACE, "adopted-all-tpl") or {}).get("metadata", {})
                  .get("ownerReferences"), "the claim adopted")
    # A template that does not exist: a Warning Event, counted again at the next attempt.
    api.create(solo("orphan", [{"name": "missing", "scope": "AllReplicas"}], []))
    events = client.CoreV1Api(admin)
    kube.wait_for(lambda: any((e.count or 0) >= 2 for e in events.list_namespaced_event(NAMESPACE).items
                              if e.reason == "ResourceClaimTemplateNotFound"), "the Event counted twice", 20)
    # A Grove pod whose PodCliqueSet the webhook has not cached: one GET, and a denial.
    ghost = workload_pcs_raw(1, NAMESPACE)
    ghost["metadata"]["name"] = "no-such-pcs"
    pod = grove_pod(ghost, 0, "worker-a", 0)
    del pod["metadata"]["ownerReferences"]
    try:
        create(admin, pod)
    except ApiException as err:
        assert "no-such-pcs" in json.loads(err.body)["message"]
    else:
        raise AssertionError("a pod of a PodCliqueSet that does not exist was admitted")


def test_every_grant_is_used_and_no_request_refused(
    control_plane: ControlPlane, admin: client.ApiClient, release: Release, reconciling: Command
) -> None:
    exercise(admin)
    requests = [r for r in audit.requests(control_plane.audit_log) if r.user.startswith(f"system:serviceaccount:{release.namespace}:")]
    # Refused by the authorizer: a 403 for a namespace being deleted (another test's, the reconciler
    # writing an Event there) is the namespace lifecycle's, after the authorizer allowed the request.
    refused = [r for r in requests if r.code == 403 and r.authorization != "allow"
               and not any(start <= r.received <= ready for start, ready in control_plane.startups)]
    assert not refused, f"the API server refused: {refused[:5]}"
    used: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
    for r in requests:
        used[r.component].add((r.group, r.resource, r.verb))
    assert set(used) == set(GRANTED), f"requests from unexpected user agents: {set(used) - set(GRANTED)}"
    for component, granted in GRANTED.items():
        assert used[component] == granted, (component, sorted(granted - used[component]), sorted(used[component] - granted))
