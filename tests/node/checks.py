"""The README's "Check that it works", run as written against a release of the README's name and
namespace, what each block shows checked; then the pods Grove would create, created through the API
server: each gets its claims from the webhook behind its Service, and the reconciler (sidecar or
Deployment) has made every claim the workload needs. And the README's uninstall, after which nothing
of the release is left."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from typing import Any

import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cluster import kube
from cluster.groveapi import ClusterApi
from cluster.pods import create, grove_pods
from node import readme
from node.pods import NAMESPACE, RELEASE, until
from node.readme import Shell
from reconciler.grove import GroveOperator, ext_ns_template

ROOT = readme.ROOT
WORKLOAD = ROOT / "examples" / "objects" / "workload-resource-sharing.yaml"
DEMO = "rs-demo"
DENIED_FIELD = 'spec.template.resourceSharing[2].filter.childCliqueNames[0]: Not found: "worker-c"'
Obj = dict[str, Any]


class Existing(ClusterApi):
    """The API as Grove's operator uses it, for a PodCliqueSet the README's ``kubectl apply`` created."""

    def create(self, obj: Obj, namespace: str | None = None) -> Obj:
        try:
            return super().create(obj, namespace)
        except ApiException as err:
            if err.status != 409:
                raise
            found = self.get(obj["kind"].lower() + "s", obj["metadata"]["namespace"], obj["metadata"]["name"])
            assert found is not None
            return found


def expected_claims(namespace: str) -> tuple[set[str], dict[str, list[str]]]:
    """What ``python -m webhook claims`` says the workload makes: every claim, and each pod's claims."""
    done = subprocess.run([sys.executable, "-m", "webhook", "claims", str(WORKLOAD), "-o", "json"], capture_output=True,
                          text=True, check=True, cwd=ROOT)
    answer = json.loads(done.stdout)
    return {c["name"] for c in answer["claims"]}, {p["podClique"]: p["claims"] for p in answer["pods"] if p["podIndex"] == 0}


def check_ready_and_registered(shell: Shell, pods: int, containers: int, validating: bool) -> None:
    """The first block: rollout done, each pod ``containers/containers`` ready, both configurations
    there (in ``validation.mode=policy`` there is no validating one: the policy is there instead)."""
    done = shell(readme.checks()[0], check=validating)
    lines = done.stdout.splitlines()
    running = [line.split() for line in lines if line.startswith(f"{RELEASE}-") and " Running " in f" {line} "]
    listed = [row for row in running if not row[0].startswith(f"{RELEASE}-reconciler-")]
    assert len(listed) == pods and all(row[1] == f"{containers}/{containers}" for row in listed), done.stdout
    if containers == 1:  # reconciler.mode=deployment: its own pods, of the same release
        reconcilers = [row for row in running if row[0].startswith(f"{RELEASE}-reconciler-")]
        assert len(reconcilers) == 2 and all(row[1] == "1/1" for row in reconcilers), done.stdout
    if validating:
        assert f"mutatingwebhookconfiguration.admissionregistration.k8s.io/{RELEASE} " in done.stdout, done.stdout
        assert f"validatingwebhookconfiguration.admissionregistration.k8s.io/{RELEASE} " in done.stdout, done.stdout
    else:  # one kind found: kubectl names it in no row
        assert re.search(rf"^{RELEASE}\s+1\s", done.stdout, re.M), done.stdout
        assert done.stderr.strip() == f'Error from server (NotFound): validatingwebhookconfigurations.admissionregistration.k8s.io "{RELEASE}" not found', done.stderr


def check_denied(shell: Shell, validating: bool) -> None:
    """The second block: the dry run is denied, with the README's text by the webhook, with the same
    field and message inside the policy's wording by the ValidatingAdmissionPolicy."""
    done = shell(readme.checks()[1], check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    if validating:
        assert done.stderr.strip() == readme.denial()
    else:
        assert "ValidatingAdmissionPolicy" in done.stderr and DENIED_FIELD in done.stderr, done.stderr


def check_warnings(shell: Shell) -> None:
    """The warnings example "run the same way" prints ``Warning:`` lines."""
    example = "examples/admission/pcs-create-warnings.json"
    command = readme.checks()[1].replace("examples/admission/pcs-create-f2-filter-clique-not-found.json", example)
    done = shell(command.split("\n#")[0])
    assert any(line.startswith("Warning: ") for line in done.stderr.splitlines()), done.stderr


def check_workload(shell: Shell, admin: client.ApiClient, namespace_made: bool = False) -> GroveOperator:
    """The third block, with ``rs-shared``'s template there; then Grove's pods created through the
    API server: each stored with its claims and the annotation; every claim made by the reconciler.
    ``namespace_made``: ``rs-demo`` was made before the install (namespaced RBAC puts Roles in it),
    so the block's ``kubectl create namespace`` is refused and the rest goes on."""
    api = ClusterApi(admin)
    kube.create_namespace(admin, "rs-shared")
    try:
        api.create(ext_ns_template())
    except ApiException as err:
        if err.status != 409:
            raise
    if namespace_made:
        done = shell(readme.checks()[2], errexit=False)
        # The last command may also find no claims yet, if it runs before the reconciler has made them.
        refused = f'Error from server (AlreadyExists): namespaces "{DEMO}" already exists'
        assert done.stderr.splitlines()[0] == refused, done.stderr
        assert set(done.stderr.splitlines()[1:]) <= {f"No resources found in {DEMO} namespace."}, done.stderr
    else:
        shell(readme.checks()[2])
    pcs = next(d for d in yaml.safe_load_all(WORKLOAD.read_text()) if d and d["kind"] == "PodCliqueSet")
    pcs["metadata"]["namespace"] = DEMO
    operator = GroveOperator(Existing(admin), copy.deepcopy(pcs))
    operator.sync()
    names, per_pod = expected_claims(DEMO)
    for pod in grove_pods(operator):
        stored = create(admin, pod)
        clique = stored["metadata"]["labels"]["grove.io/podclique"]
        made = [c["resourceClaimName"] for c in stored["spec"].get("resourceClaims", [])]
        assert made and stored["metadata"]["annotations"]["resource-sharing.grove.io/claims"] == ",".join(made), stored["metadata"]
        if clique in per_pod:
            assert made == per_pod[clique]

    def claims() -> set[str]:
        return {c["metadata"]["name"] for c in api.list("resourceclaims", DEMO, "app.kubernetes.io/part-of=rs-test")}

    until(lambda: claims() == names, f"the reconciler to make the workload's {len(names)} claims", 60)
    listed = shell(f"kubectl -n {DEMO} get resourceclaims").stdout
    assert all(name in listed for name in names)
    return operator


def readme_checks(shell: Shell, admin: client.ApiClient, pods: int = 2, containers: int = 2, validating: bool = True,
                  namespace_made: bool = False) -> GroveOperator:
    check_ready_and_registered(shell, pods, containers, validating)
    check_denied(shell, validating)
    if validating:
        check_warnings(shell)
    return check_workload(shell, admin, namespace_made)


def remove_demo(admin: client.ApiClient) -> None:
    """The workload's namespaces, gone (the next release's README run creates ``rs-demo`` again)."""
    core = client.CoreV1Api(admin)
    for name in (DEMO, "rs-shared"):
        try:
            core.delete_namespace(name)
        except ApiException as err:
            if err.status != 404:
                raise

    def gone() -> bool:
        return all(not _exists(lambda n=n: core.read_namespace(n)) for n in (DEMO, "rs-shared"))

    until(gone, "the workload's namespaces to be deleted", 90, 0.5)


def _exists(read: Any) -> bool:
    try:
        read()
        return True
    except ApiException as err:
        if err.status == 404:
            return False
        raise


def release_objects(admin: client.ApiClient) -> list[str]:
    """What is left of the release anywhere: webhook configurations, the policy and its binding,
    roles and bindings (cluster-wide and in every namespace), Secrets, Jobs, Deployments."""
    selector = f"app.kubernetes.io/instance={RELEASE}"
    registration = client.AdmissionregistrationV1Api(admin)
    rbac = client.RbacAuthorizationV1Api(admin)
    core, batch, apps = client.CoreV1Api(admin), client.BatchV1Api(admin), client.AppsV1Api(admin)
    left = []
    for kind, read in (("ValidatingWebhookConfiguration", registration.read_validating_webhook_configuration),
                       ("MutatingWebhookConfiguration", registration.read_mutating_webhook_configuration)):
        if _exists(lambda read=read: read(RELEASE)):
            left.append(kind)
    listings = {
        "ValidatingAdmissionPolicy": registration.list_validating_admission_policy,
        "ValidatingAdmissionPolicyBinding": registration.list_validating_admission_policy_binding,
        "ClusterRole": rbac.list_cluster_role, "ClusterRoleBinding": rbac.list_cluster_role_binding,
        "Role": rbac.list_role_for_all_namespaces, "RoleBinding": rbac.list_role_binding_for_all_namespaces,
        "Secret": core.list_secret_for_all_namespaces, "ConfigMap": core.list_config_map_for_all_namespaces,
        "Job": batch.list_job_for_all_namespaces, "Deployment": apps.list_deployment_for_all_namespaces,
        "ServiceAccount": core.list_service_account_for_all_namespaces,
    }
    for kind, listing in listings.items():
        left += [f"{kind} {o.metadata.namespace or ''}/{o.metadata.name}" for o in listing(label_selector=selector).items]
    # The hook's Job and a Secret of the existingSecret mode are named, not only labelled.
    left += [f"Job {j.metadata.namespace}/{j.metadata.name}" for j in batch.list_job_for_all_namespaces().items
             if j.metadata.name.startswith(f"{RELEASE}-") and f"Job {j.metadata.namespace}/{j.metadata.name}" not in left]
    return sorted(set(left))


def uninstall_leaves_nothing(shell: Shell, admin: client.ApiClient, hook_deadline: float = 60) -> None:
    """The README's uninstall: the pre-delete hook's Job runs on the node and deletes both
    configurations, then Helm removes the rest; the namespace goes; nothing of the release is left."""
    done = shell(readme.uninstall(), timeout=240)
    assert "release \"grove-sharing-webhook\" uninstalled" in done.stdout, done.stdout + done.stderr
    core = client.CoreV1Api(admin)
    until(lambda: not _exists(lambda: core.read_namespace(NAMESPACE)), "the release's namespace to be deleted", 90, 0.5)
    assert release_objects(admin) == []


def force_cleanup(shell: Shell, admin: client.ApiClient) -> None:
    """After a failed test: the release removed whatever state it is in, so the next module starts
    from an empty cluster."""
    shell(f"helm uninstall {RELEASE} -n {NAMESPACE} --no-hooks --wait --timeout 60s || true", check=False)
    registration = client.AdmissionregistrationV1Api(admin)
    for delete in (registration.delete_validating_webhook_configuration, registration.delete_mutating_webhook_configuration):
        try:
            delete(RELEASE)
        except ApiException:
            pass
    for name in (NAMESPACE, DEMO, "rs-shared"):
        try:
            client.CoreV1Api(admin).delete_namespace(name)
        except ApiException:
            pass
    core = client.CoreV1Api(admin)
    until(lambda: not any(_exists(lambda n=n: core.read_namespace(n)) for n in (NAMESPACE, DEMO, "rs-shared")),
          "namespaces of the failed release to go", 120, 0.5)
