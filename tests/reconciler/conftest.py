"""Fixtures: the fake API server, and reconcilers running in this process against it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fakeapi import FakeApiServer, new_api_client, wait_until
from fakeapi.fixtures import fake_api, fake_api_server, kube_api_client, kubeconfig_path  # noqa: F401

from webhook.reconciler import ReconcileSettings
from webhook.reconciler.command import Controller, reconciler_client

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
FAST = {"backoff_base": 0.05, "backoff_max": 0.5, "health_port": 0, "resync_period": 60.0, "claims_grace": 0.1}


class Running:
    """A reconciler running in a thread; ``stop`` returns its exit code."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller
        self.exit_code: int | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self.exit_code = self.controller.run()

    @property
    def writes(self) -> int:
        """Requests this reconciler sent that change something (from its client's access record)."""
        calls = self.controller.api.access.calls
        return sum(n for (_, _, verb), n in calls.items() if verb in WRITE_VERBS)

    def stop(self, timeout: float = 10.0) -> int | None:
        self.controller.request_stop()
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the reconciler did not stop"
        return self.exit_code

    def wait_active(self) -> None:
        wait_until(lambda: self.controller.active, message="reconciler workers started")


Start = Callable[..., Running]


@pytest.fixture(autouse=True)
def no_closed_log_streams() -> Iterator[None]:
    """A command run in-process by an earlier test may leave a root handler on a captured stream
    that is closed now; the reconciler's threads would log into it."""
    root = logging.getLogger()
    closed = [h for h in root.handlers if getattr(getattr(h, "stream", None), "closed", False)]
    for handler in closed:
        root.removeHandler(handler)
    yield
    for handler in closed:
        root.addHandler(handler)


@pytest.fixture
def start_reconciler(fake_api: FakeApiServer, kubeconfig_path: Path) -> Iterator[Start]:
    running: list[Running] = []

    def start(identity: str = "reconciler-a", kubeconfig: Path | None = None, **options: Any) -> Running:
        settings = ReconcileSettings(**{**FAST, **options})
        api = reconciler_client(new_api_client(kubeconfig or kubeconfig_path), "default")
        handle = Running(Controller(api, settings, identity, "default"))
        running.append(handle)
        return handle

    yield start
    for handle in running:
        if handle.exit_code is None:
            handle.stop()
