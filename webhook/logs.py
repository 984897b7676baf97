"""Process-wide logging as ``--log-format`` asks: plain text for people, JSON lines for collectors.

Every line carries a logger name of the project (``webhook.*``, uvicorn's renamed), so that a
collector selects the project's lines by one prefix. A text line is one line whatever a request
holds: its arguments are cut and control characters escaped, so that a request can neither forge a
line nor make one as long as itself; JSON's encoding escapes, and collectors keep whole values.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

import orjson

_STANDARD_ATTRIBUTES = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "color_message"}

RENAMED = {
    "uvicorn": "webhook.server.uvicorn",
    "uvicorn.error": "webhook.server.uvicorn",
    "uvicorn.access": "webhook.server.access",
}
"""Loggers of libraries the project runs, by the project's name for them."""

VALUE_LIMIT = 256
"""Characters a text line shows of one value (a Kubernetes name has at most 253)."""

MESSAGE_LIMIT = 1024
"""Characters a text line shows of a ``Message`` argument, a sentence made of several values."""

_ESCAPES = {
    code: repr(chr(code))[1:-1]
    for code in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}
"""Control characters, line and paragraph separators and bidirectional overrides, each as ``repr``
writes it."""


class Message(str):
    """A sentence (a denial's message) rather than one value: cut at ``MESSAGE_LIMIT``."""


def _shown(value: object) -> object:
    limit = MESSAGE_LIMIT if isinstance(value, Message) else VALUE_LIMIT
    if not isinstance(value, str) or len(value) <= limit:
        return value
    return f"{value[:limit]}...({len(value) - limit} more characters)"


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message``; a traceback that follows keeps its lines."""

    def format(self, record: logging.LogRecord) -> str:
        if isinstance(record.args, tuple) and any(isinstance(arg, str) and len(arg) > VALUE_LIMIT for arg in record.args):
            record = logging.makeLogRecord({**vars(record), "args": tuple(_shown(arg) for arg in record.args)})
        return super().format(record)

    def formatMessage(self, record: logging.LogRecord) -> str:
        if not record.message.isprintable():
            record.message = record.message.translate(_ESCAPES)
        return super().formatMessage(record)


class JsonFormatter(logging.Formatter):
    """One JSON object per line; ``extra={...}`` fields (e.g. ``uid``) become top-level keys."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update((key, value) for key, value in vars(record).items() if key not in _STANDARD_ATTRIBUTES)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class ProjectNames(logging.Filter):
    """Renames ``RENAMED`` loggers' records; uvicorn's access lines get their request as fields."""

    def filter(self, record: logging.LogRecord) -> bool:
        name = RENAMED.get(record.name)
        if name is None:
            return True
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) == 5:
            record.client, record.method, record.path, _version, record.status = record.args
        record.name = name
        return True


def configure(level: str, log_format: str) -> None:
    """One handler on the root logger, to standard error. Records carry no thread or process names,
    which no format shows: the standard library documents turning them off for cheaper records."""
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(ProjectNames())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
