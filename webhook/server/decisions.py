"""One log line per admission decision: who asked what, what was decided, how fast.

Denials, errors and rejected requests are logged at INFO, allowed and patched ones at DEBUG (a busy
cluster admits thousands of pods a minute; a patched pod records the claims the webhook added in its
``resource-sharing.grove.io/claims`` annotation, and its line at DEBUG names them too). The fields (``uid``, ``webhook``, ``operation``,
``object``, ``decision``, ``code``, ``duration_ms`` and, when the answer has one, ``detail``) are
top-level keys in ``--log-format json``; the text line says the same in one sentence, with the
request's values as the record's arguments, which text logs cut and escape (``webhook.logs``). The
endpoint asks ``log.isEnabledFor`` first, so a request whose line is not written pays for neither
the fields nor the text.
"""

from __future__ import annotations

import logging
from typing import Any

from webhook import logs
from webhook.webhooks import Answer
from webhook.server.metrics import UNKNOWN

log = logging.getLogger(__name__)

QUIET = frozenset({"allowed", "patched"})


def _status(decision: Answer) -> tuple[int, str]:
    """The status code the caller sees (``response.status.code``, or the HTTP status of a
    rejected request) and the message that comes with it."""
    body = decision.body
    if decision.status != 200:
        return decision.status, str(body.get("error", ""))
    response = body.get("response")
    status = response.get("status") if isinstance(response, dict) else None
    if not isinstance(status, dict):
        return decision.status, ""
    return int(status.get("code", decision.status)), str(status.get("message", ""))


def fields(webhook: str, decision: Answer, seconds: float) -> dict[str, Any]:
    code, detail = _status(decision)
    found: dict[str, Any] = {
        "uid": decision.uid,
        "webhook": webhook,
        "operation": decision.operation or UNKNOWN,
        "object": decision.name,
        "decision": decision.outcome,
        "code": code,
        "duration_ms": round(seconds * 1000, 3),
    }
    if decision.outcome == "patched":
        detail = decision.note
    if detail and decision.outcome != "allowed":
        found["detail"] = detail
    return found


def text(entry: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """The template and arguments of
    ``mutate-pod CREATE team-a/rs-test-0-worker-a-: denied, code 403, 0.41 ms, uid 7f0b...: <detail>``."""
    subject = [part for part in (entry["webhook"], entry["operation"], entry["object"]) if part]
    template = " ".join(["%s"] * len(subject)) + ": %s, code %d, %.2f ms"
    args: list[Any] = [*subject, entry["decision"], entry["code"], entry["duration_ms"]]
    if entry["uid"]:
        template += ", uid %s"
        args.append(entry["uid"])
    if "detail" in entry:
        template += ": %s"
        args.append(logs.Message(entry["detail"]))
    return template, tuple(args)


def log_decision(level: int, webhook: str, decision: Answer, seconds: float) -> None:
    """Writes the line (the caller has checked the level)."""
    entry = fields(webhook, decision, seconds)
    template, args = text(entry)
    log.log(level, template, *args, extra=entry)
