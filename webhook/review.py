"""``webhook review``: one AdmissionReview decided offline by the webhook the server would route it
to (by ``request.kind.kind``, or the object's own kind), through the same table and the same
``answer``, so that the printed response is byte for byte the server's body.
"""

from __future__ import annotations

import asyncio
import sys

import orjson
import yaml

from webhook.core.admission import AdmissionReview, Answer, Rejection, answer, decode
from webhook.errors import CommandError
from webhook.settings import ReviewSettings
from webhook.stores import StoreError, build_store
from webhook.webhooks import WEBHOOKS, Webhook

UNUSABLE = 2


def review(settings: ReviewSettings) -> int:
    body = _read(settings.file)
    decoded = decode(body)
    if isinstance(decoded, Rejection):
        raise CommandError(_unusable(settings.file, body, decoded), UNUSABLE)
    webhook = _webhook_for(decoded)
    decided = asyncio.run(_decide(settings, webhook, body))
    content = decided.content()
    if settings.output == "yaml":
        sys.stdout.write(yaml.safe_dump(orjson.loads(content), sort_keys=False, allow_unicode=True))
    else:
        sys.stdout.buffer.write(content + b"\n")
    sys.stdout.flush()
    if decided.error is not None:
        error = f"{type(decided.error).__name__}: {decided.error}"
        raise CommandError(f"{settings.file}: internal error in the {webhook.name} webhook: {error}", UNUSABLE)
    response = decided.body["response"]
    if response["allowed"]:
        return 0
    if decided.outcome == "denied":
        return 1
    raise CommandError(f"{settings.file}: {response['status']['message']}", UNUSABLE)


def _unusable(file: str, body: bytes, rejection: Rejection) -> str:
    """Why the file is no review, said of the file: the server's words are about a request body."""
    name = "standard input" if file == "-" else file
    if not body.strip():
        return f"{name} is not an AdmissionReview: it is empty"
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as err:
        return f"{name} is not an AdmissionReview: not valid JSON ({err})"
    if not isinstance(data, dict):
        return f"{name} is not an AdmissionReview: a JSON {_json_type(data)}, not an object"
    return f"{name}: {rejection.message}"


def _json_type(value: object) -> str:
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}.get(type(value), "null")


def _read(file: str) -> bytes:
    try:
        return sys.stdin.buffer.read() if file == "-" else open(file, "rb").read()
    except OSError as err:
        raise CommandError(f"cannot read {file}: {err.strerror or err}", UNUSABLE) from None


def _requested_kind(review: AdmissionReview) -> str | None:
    request = review.request
    if request.kind.kind:
        return request.kind.kind
    for source in (request.object, request.old_object):
        if isinstance(source, dict) and isinstance(source.get("kind"), str) and source["kind"]:
            return str(source["kind"])
    return None


def _webhook_for(review: AdmissionReview) -> Webhook:
    """The webhook for the review's kind; a review that names none goes to the first webhook,
    which says what is wrong with it exactly as the server would."""
    kind = _requested_kind(review)
    if kind is None:
        return WEBHOOKS[0]
    for webhook in WEBHOOKS:
        if webhook.kind == kind:
            return webhook
    known = ", ".join(webhook.kind for webhook in WEBHOOKS)
    raise CommandError(f"no webhook decides kind {kind!r} (known kinds: {known})", UNUSABLE)


async def _decide(settings: ReviewSettings, webhook: Webhook, body: bytes) -> Answer:
    try:
        store = build_store(settings)
        await store.start()
    except StoreError as err:
        raise CommandError(str(err), UNUSABLE) from None
    try:
        return await answer(webhook.build(settings, store), webhook.name, body)
    finally:
        await store.stop()
