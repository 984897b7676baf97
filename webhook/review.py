"""``webhook review``: one AdmissionReview decided offline by the webhook the server would route it to.

The review is dispatched on ``request.kind.kind`` (or the object's own kind) through the same table
of webhooks the server mounts, and the printed response is byte for byte the server's body.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import orjson

from webhook.core.envelope import Decision
from webhook.errors import CommandError
from webhook.settings import ReviewSettings
from webhook.stores.base import StoreError
from webhook.webhooks import WEBHOOKS, Webhook, internal_error

UNUSABLE = 2


def review(settings: ReviewSettings) -> int:
    body = _read(settings.file)
    webhook = _webhook_for(body)
    decision = asyncio.run(_decide(settings, webhook, body))
    if decision.status != 200:
        raise CommandError(f"{settings.file}: {decision.body['error']}", UNUSABLE)
    sys.stdout.buffer.write(decision.content() + b"\n")
    sys.stdout.flush()
    response = decision.body["response"]
    if response["allowed"]:
        return 0
    if decision.outcome == "denied":
        return 1
    raise CommandError(f"{settings.file}: {response['status']['message']}", UNUSABLE)


def _read(file: str) -> bytes:
    try:
        return sys.stdin.buffer.read() if file == "-" else open(file, "rb").read()
    except OSError as err:
        raise CommandError(f"cannot read {file}: {err.strerror or err}", UNUSABLE) from None


def _requested_kind(body: bytes) -> str | None:
    try:
        data: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    request = data.get("request") if isinstance(data, dict) else None
    if not isinstance(request, dict):
        return None
    for source in (request.get("kind"), request.get("object"), request.get("oldObject")):
        if isinstance(source, dict) and isinstance(source.get("kind"), str) and source["kind"]:
            return str(source["kind"])
    return None


def _webhook_for(body: bytes) -> Webhook:
    """The webhook for the review's kind; an unreadable review goes to the first webhook, whose
    envelope check says what is wrong with it exactly as the server would."""
    kind = _requested_kind(body)
    if kind is None:
        return WEBHOOKS[0]
    for webhook in WEBHOOKS:
        if webhook.kind == kind:
            return webhook
    known = ", ".join(webhook.kind for webhook in WEBHOOKS)
    raise CommandError(f"no webhook decides kind {kind!r} (known kinds: {known})", UNUSABLE)


async def _decide(settings: ReviewSettings, webhook: Webhook, body: bytes) -> Decision:
    from webhook.stores import build_store

    try:
        store = build_store(settings)
        await store.start()
    except StoreError as err:
        raise CommandError(str(err), UNUSABLE) from None
    try:
        return await webhook.build(settings, store)(body)
    except Exception as err:  # noqa: BLE001 - a bug of ours: answered as the server answers it, in one line
        sys.stdout.buffer.write(internal_error(webhook.name, body).content() + b"\n")
        raise CommandError(f"{settings.file}: internal error in the {webhook.name} webhook: {type(err).__name__}: {err}", UNUSABLE) from None
    finally:
        await store.stop()
