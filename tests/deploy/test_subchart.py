"""The chart as a subchart of an umbrella chart (app-of-apps, platform bundles): Helm passes it
``global`` and the ``enabled`` of its ``condition:``, which its schema takes, and its image follows
``global.imageRegistry``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from deploy.chart import CHART, chart_metadata

SUBCHART = "grove-sharing-webhook"


def umbrella(directory: Path) -> Path:
    """A chart depending on this one, copied into its ``charts/``, enabled by a condition."""
    chart = directory / "platform"
    shutil.copytree(CHART, chart / "charts" / SUBCHART)
    (chart / "Chart.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v2", "name": "platform", "version": "1.0.0",
        "dependencies": [{"name": SUBCHART, "version": chart_metadata()["version"], "condition": f"{SUBCHART}.enabled"}],
    }))
    (chart / "values.yaml").write_text(yaml.safe_dump({"global": {"imageRegistry": "mirror.example.com"}, SUBCHART: {"enabled": True}}))
    return chart


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return umbrella(tmp_path_factory.mktemp("umbrella"))


def test_the_chart_installs_as_an_enabled_subchart_with_global_values(helm, platform):
    installed = helm.install(platform, {SUBCHART: {"reconciler": {"mode": "deployment"}}}, release="platform")
    deployments = {d["metadata"]["name"] for d in installed.of_kind("Deployment")}
    assert deployments == {"platform-grove-sharing-webhook", "platform-grove-sharing-webhook-reconciler"}
    images = {c["image"] for d in installed.of_kind("Deployment") for c in d["spec"]["template"]["spec"]["containers"]}
    assert images == {f"mirror.example.com/grove-sharing-webhook:{chart_metadata()['appVersion']}"}
    assert {h["kind"] for h in installed.hooks} == {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Job"}


def test_a_disabled_subchart_installs_nothing(helm, platform):
    installed = helm.install(platform, {SUBCHART: {"enabled": False}}, release="platform")
    assert installed.documents == () and installed.hooks == ()
