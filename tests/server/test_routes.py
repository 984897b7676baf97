"""Every webhook of the table is served by ``create_app`` at its path, and only there."""

from __future__ import annotations

import pytest

from server.asgi import call
from server.memorystore import MemoryStore
from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.webhooks import WEBHOOKS

PATHS = [pytest.param(webhook.path, id=webhook.name) for webhook in WEBHOOKS]


@pytest.mark.parametrize("path", PATHS)
def test_each_webhook_answers_at_its_path(path: str) -> None:
    response = call(create_app(ServeSettings(), MemoryStore()), "POST", path, b"{not json")
    assert response.status_code == 400
    assert response.json()["error"].startswith("request body is not valid JSON")


@pytest.mark.parametrize("path", PATHS)
def test_other_methods_on_a_webhook_path_get_405(path: str) -> None:
    assert call(create_app(ServeSettings(), MemoryStore()), "GET", path).status_code == 405


def test_an_unknown_path_gets_404() -> None:
    assert call(create_app(ServeSettings(), MemoryStore()), "POST", "/webhooks/validate-pod", b"{}").status_code == 404
