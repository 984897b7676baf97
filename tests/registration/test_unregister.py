"""``webhook unregister``, the chart's pre-delete hook: it deletes the release's two webhook
configurations, finds it done when they are gone, waits out an API server that is away, and says
in one line why it cannot when it is refused."""

from __future__ import annotations

import threading

import pytest
from fakeapi import CuttableProxy, FakeApiServer

from fakeapi.fixtures import fake_api, fake_api_server, kubeconfig_path  # noqa: F401
from webhook.cli import main

NAME = "grove-sharing-webhook"
PLURALS = ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")
KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")


def configurations(api: FakeApiServer, *kinds: str, name: str = NAME) -> None:
    for kind in kinds:
        api.create({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name}, "webhooks": []})


def remaining(api: FakeApiServer, name: str = NAME) -> list[str]:
    return [plural for plural in PLURALS if api.get(plural, None, name) is not None]


def unregister(kubeconfig, *extra: str) -> list[str]:
    return ["unregister", "--webhook-configuration", NAME, "--kubeconfig", str(kubeconfig), *extra]


def test_it_deletes_both_configurations_and_no_other(fake_api, kubeconfig_path, capsys):
    configurations(fake_api, *KINDS)
    configurations(fake_api, *KINDS, name="another-release")
    assert main(unregister(kubeconfig_path)) == 0
    assert capsys.readouterr().out == f"deleted ValidatingWebhookConfiguration and MutatingWebhookConfiguration {NAME}\n"
    assert remaining(fake_api) == [] and remaining(fake_api, "another-release") == list(PLURALS)


@pytest.mark.parametrize(("there", "said"), [
    ((), f"no webhook configuration {NAME} to delete"),
    (("MutatingWebhookConfiguration",), f"deleted MutatingWebhookConfiguration {NAME} (ValidatingWebhookConfiguration already gone)"),
], ids=["both gone", "one gone"])
def test_configurations_already_gone_count_as_deleted(fake_api, kubeconfig_path, capsys, there, said):
    configurations(fake_api, *there)
    assert main(unregister(kubeconfig_path)) == 0
    assert capsys.readouterr().out == said + "\n"


def test_a_refusal_ends_it_at_once_in_one_line(fake_api, kubeconfig_path, capsys):
    configurations(fake_api, *KINDS)
    fake_api.fail_next("DELETE", "validatingwebhookconfigurations", 403, "Forbidden")
    assert main(unregister(kubeconfig_path)) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"webhook unregister: error: cannot delete ValidatingWebhookConfiguration {NAME}: ")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_an_api_server_away_for_a_moment_is_waited_for(fake_api, tmp_path, capsys):
    configurations(fake_api, *KINDS)
    with CuttableProxy((fake_api.host, fake_api.port)) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kubeconfig")
        proxy.cut()
        threading.Timer(1.0, proxy.restore).start()
        assert main(unregister(kubeconfig, "--timeout", "20")) == 0
    assert remaining(fake_api) == []


def test_an_api_server_away_for_good_ends_it_after_the_timeout(fake_api, tmp_path, capsys):
    with CuttableProxy((fake_api.host, fake_api.port)) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kubeconfig")
        proxy.cut()
        assert main(unregister(kubeconfig, "--timeout", "1")) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("webhook unregister: error: cannot delete ValidatingWebhookConfiguration grove-sharing-webhook: "
                                "cannot connect to the API server")
    assert len(lines) <= 3 and "Traceback" not in "\n".join(lines), "the first failure is logged, then the end"
