"""Process-wide logging as ``--log-format`` asks: plain text for people, JSON lines for collectors.

Every line carries a logger name of the project (``webhook.*``): the lines uvicorn writes under its
own names (its start and stop, and ``--access-log``) are renamed on their way out, so a collector can
select the project's lines by one prefix, and the access lines carry their request as fields.
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


class JsonFormatter(logging.Formatter):
    """One JSON object per line; ``extra={...}`` fields (e.g. ``uid``) become top-level keys."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.timezone.utc).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRIBUTES:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class ProjectNames(logging.Filter):
    """Renames the records of ``RENAMED`` loggers; uvicorn's access lines get their request as
    fields (``client``, ``method``, ``path``, ``status``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        name = RENAMED.get(record.name)
        if name is None:
            return True
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) == 5:
            client, method, path, _version, status = record.args
            record.client, record.method, record.path, record.status = client, method, path, status
        record.name = name
        return True


def configure(level: str, log_format: str) -> None:
    handler = logging.StreamHandler()
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(ProjectNames())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
