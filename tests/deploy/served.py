"""The server as the chart's pods run it: an app built from the settings the Deployment's env gives."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore


def settings_from_env(container: dict[str, Any], model: type, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The container's settings: its literal ``WEBHOOK_*`` variables read by the command's model."""
    for variable in container.get("env", []):
        if variable["name"].startswith("WEBHOOK_"):
            monkeypatch.setenv(variable["name"], variable["value"])
    return model()


def call(settings: ServeSettings, method: str, path: str, body: bytes | None = None) -> httpx.Response:
    """One request to the app ``serve`` would build, with an empty store that has synced."""
    app = create_app(settings, EmbeddedStore.of([]))

    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="https://webhook.test") as client:
            return await client.request(method, path, content=body)

    return asyncio.run(send())
