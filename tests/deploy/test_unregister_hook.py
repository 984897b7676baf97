"""The pre-delete hook: before ``helm uninstall`` deletes the pods, a Job of the project's own image
runs ``webhook unregister`` as a ServiceAccount of its own that may delete exactly the release's
two webhook configurations, so no webhook that fails closed is left behind."""

from __future__ import annotations

from deploy.served import settings_from_env
from webhook.cli import COMMANDS
from webhook.registration import UnregisterSettings

FULLNAME = "sharing-grove-sharing-webhook"
HOOK = f"{FULLNAME}-unregister"


def hooks(installed) -> dict[str, dict]:
    return {h["kind"]: h for h in installed.hooks}


def test_it_is_on_by_default_and_runs_before_anything_is_deleted(default_install):
    made = hooks(default_install)
    assert set(made) == {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Job"}
    for hook in made.values():
        annotations = hook["metadata"]["annotations"]
        assert annotations["helm.sh/hook"] == "pre-delete"
        assert set(annotations["helm.sh/hook-delete-policy"].split(",")) == {"before-hook-creation", "hook-succeeded"}
    weight = {kind: int(hook["metadata"]["annotations"]["helm.sh/hook-weight"]) for kind, hook in made.items()}
    assert max(weight["ServiceAccount"], weight["ClusterRole"], weight["ClusterRoleBinding"]) < weight["Job"]
    assert not {"Job"} & {d["kind"] for d in default_install.documents}, "the Job is a hook, not part of the release"


def test_the_job_deletes_the_configurations_the_release_installs(default_install, monkeypatch):
    pod = hooks(default_install)["Job"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"] == ["unregister"] and "unregister" in {c.name for c in COMMANDS}
    settings = settings_from_env(container, UnregisterSettings, monkeypatch)
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        assert default_install.one(kind)["metadata"]["name"] == settings.webhook_configuration
    assert pod["serviceAccountName"] == HOOK and pod["restartPolicy"] == "Never"
    assert container["image"] == default_install.container("webhook")["image"]
    assert container["securityContext"] == default_install.container("webhook")["securityContext"]


def test_its_role_may_delete_those_two_and_nothing_else(default_install):
    made = hooks(default_install)
    assert made["ClusterRole"]["rules"] == [{
        "apiGroups": ["admissionregistration.k8s.io"],
        "resources": ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
        "resourceNames": [FULLNAME], "verbs": ["delete"],
    }]
    assert made["ClusterRoleBinding"]["subjects"] == [{"kind": "ServiceAccount", "name": HOOK, "namespace": "grove-system"}]


def test_it_is_scheduled_as_the_webhook_is_and_bounded_in_time(render):
    installed = render({"nodeSelector": {"pool": "system"}, "tolerations": [{"key": "system", "operator": "Exists"}],
                        "unregisterHook": {"activeDeadlineSeconds": 60}})
    job = hooks(installed)["Job"]["spec"]
    assert job["activeDeadlineSeconds"] == 60 and job["backoffLimit"] >= 1
    assert job["template"]["spec"]["nodeSelector"] == {"pool": "system"}
    assert job["template"]["spec"]["tolerations"] == [{"key": "system", "operator": "Exists"}]


def test_it_can_be_turned_off_and_the_notes_then_say_to_delete_the_configurations_first(render, default_install):
    installed = render({"unregisterHook": {"enabled": False}})
    assert installed.hooks == ()
    assert "kubectl delete validatingwebhookconfiguration,mutatingwebhookconfiguration" in installed.notes
    assert "kubectl delete validatingwebhookconfiguration" not in default_install.notes
    assert "pre-delete hook" in default_install.notes
