"""Reading the API server's answers: status codes and the one-line message of a failure."""

from __future__ import annotations

import orjson
from kubernetes.client.exceptions import ApiException

NOT_FOUND = 404
CONFLICT = 409


def status_message(err: ApiException) -> str:
    """The ``message`` of the ``Status`` the server answered with, else the HTTP reason."""
    try:
        body = orjson.loads(err.body or b"")
    except (orjson.JSONDecodeError, TypeError):
        body = None
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join((str(message) if message else f"{err.status} {err.reason}").split())

