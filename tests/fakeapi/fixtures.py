"""Pytest fixtures for the fake API server.

One server per test session (starting uvicorn costs more than a test), wiped
before each test that asks for `fake_api`. To use these outside this folder,
import them into a conftest::

    from fakeapi.fixtures import fake_api, fake_api_server, kube_api_client, kubeconfig_path  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .kubeconfig import new_api_client
from .server import FakeApiServer


@pytest.fixture(scope="session")
def fake_api_server() -> Iterator[FakeApiServer]:
    """The session's server, as it is (prefer `fake_api`, which starts each test clean)."""
    with FakeApiServer() as server:
        yield server


@pytest.fixture
def fake_api(fake_api_server: FakeApiServer) -> FakeApiServer:
    """The session's server with no objects, history, watches, faults or logged requests."""
    fake_api_server.reset()
    return fake_api_server


@pytest.fixture
def kubeconfig_path(fake_api: FakeApiServer, tmp_path: Path) -> Path:
    """A kubeconfig file pointing at `fake_api` (current namespace ``default``)."""
    return fake_api.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def kube_api_client(kubeconfig_path: Path) -> Iterator[Any]:
    """An official ``kubernetes.client.ApiClient`` loaded from `kubeconfig_path`."""
    client = new_api_client(kubeconfig_path)
    try:
        yield client
    finally:
        client.close()
