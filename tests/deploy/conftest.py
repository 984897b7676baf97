"""Fixtures: the chart installed by Helm's own library against a stand-in API server."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import pytest

from deploy.chart import CHART
from deploy.helm import Helm, HelmUnavailable, Rendered

Render = Callable[..., Rendered]


@pytest.fixture(scope="session")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    try:
        return Helm(tmp_path_factory.mktemp("helm"))
    except HelmUnavailable as err:
        if os.environ.get("CI"):
            pytest.fail(f"the chart cannot be rendered in CI: {err}")
        pytest.skip(str(err))


@pytest.fixture(scope="session")
def render(helm: Helm) -> Render:
    """``render(values, release=..., namespace=..., target=...)``: the install's documents.

    An install takes about half a second, so the same values are installed once per session
    (a test that needs a fresh install passes its own ``target``)."""
    done: dict[str, Rendered] = {}

    def install(values: dict[str, Any] | None = None, **kwargs: Any) -> Rendered:
        if "target" in kwargs:
            return helm.install(CHART, values or {}, **kwargs)
        key = json.dumps([values, kwargs], sort_keys=True)
        if key not in done:
            done[key] = helm.install(CHART, values or {}, **kwargs)
        return done[key]

    return install


@pytest.fixture(scope="session")
def default_install(render: Render) -> Rendered:
    return render()
