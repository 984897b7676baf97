"""Process-wide logging as ``--log-format`` asks: plain text for people, JSON lines for collectors.

Every line carries a logger name of the project (``webhook.*``): the lines uvicorn writes under its
own names (its start and stop, and ``--access-log``) are renamed on their way out, so a collector can
select the project's lines by one prefix, and the access lines carry their request as fields.

A text line is one line whatever a request holds: the values a line is made of (its arguments: a
uid, a name, a path) are cut to a bounded length, and control characters in the line are escaped,
so that a request cannot forge a line of its own or make one as long as itself. JSON lines need
neither: the encoding escapes, and a collector keeps whole values as fields.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from collections.abc import Callable
from typing import Any

import msgspec
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
"""Control characters (C0, DEL, C1), the Unicode line and paragraph separators and the
bidirectional overrides, each as Python's ``repr`` writes it (``\\n``, ``\\x1b``, ``\\u2028``)."""


class Message(str):
    """An argument that is a sentence rather than one value (a denial's message): cut at
    ``MESSAGE_LIMIT`` rather than ``VALUE_LIMIT`` in text lines."""


def cut(value: str, limit: int) -> str:
    if len(value) <= limit:
        return value
    return f"{value[:limit]}...({len(value) - limit} more characters)"


def escape(line: str) -> str:
    return line if line.isprintable() else line.translate(_ESCAPES)


def _shown(value: object) -> object:
    if isinstance(value, Message):
        return cut(value, MESSAGE_LIMIT)
    if isinstance(value, str):
        return cut(value, VALUE_LIMIT)
    return value


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message`` with the message's arguments cut and its control characters
    escaped (a traceback that follows keeps its lines)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self._second = -1
        self._second_text = ""

    def format(self, record: logging.LogRecord) -> str:
        if isinstance(record.args, tuple) and any(isinstance(arg, str) and len(arg) > VALUE_LIMIT for arg in record.args):
            record = logging.makeLogRecord({**vars(record), "args": tuple(_shown(arg) for arg in record.args)})
        return super().format(record)

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = escape(record.message)
        return super().formatMessage(record)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return self.time_text(record.created)

    def time_text(self, created: float) -> str:
        """``2026-01-01 12:00:00,123`` in local time, as ``logging`` writes it; the part before the
        comma is made once a second."""
        second = int(created)
        if second != self._second:
            self._second, self._second_text = second, time.strftime("%Y-%m-%d %H:%M:%S", self.converter(second))
        return f"{self._second_text},{int((created - second) * 1000):03d}"

    def line(self, created: float, level: int, name: str, template: str, args: tuple[Any, ...], fields: dict[str, Any]) -> str:
        """What ``format`` makes of a record of these values (``fields`` are not shown)."""
        return self.prefixed(created, level, name, escape(template % tuple(_shown(arg) for arg in args)))

    def prefixed(self, created: float, level: int, name: str, message: str) -> str:
        """The line of ``message``, made already (its values cut, escaped)."""
        return f"{self.time_text(created)} {logging.getLevelName(level)} {name}: {message}"


class JsonFormatter(logging.Formatter):
    """One JSON object per line; ``extra={...}`` fields (e.g. ``uid``) become top-level keys."""

    def format(self, record: logging.LogRecord) -> str:
        fields = {key: value for key, value in vars(record).items() if key not in _STANDARD_ATTRIBUTES}
        if record.exc_info:
            fields["exception"] = self.formatException(record.exc_info)
        return self._json(record.created, record.levelname, record.name, record.getMessage(), fields)

    def line(self, created: float, level: int, name: str, template: str, args: tuple[Any, ...], fields: dict[str, Any]) -> str:
        """What ``format`` makes of a record of these values, ``fields`` given as ``extra``."""
        return self._json(created, logging.getLevelName(level), name, template % args, fields)

    @staticmethod
    def _json(created: float, level: str, name: str, message: str, fields: dict[str, Any]) -> str:
        entry: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(created, datetime.timezone.utc).isoformat(timespec="milliseconds"),
            "level": level.lower(),
            "logger": name,
            "message": message,
        }
        entry.update(fields)
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


class ProjectHandler(logging.StreamHandler):
    """The handler ``configure`` installs: standard error, in the format asked for.

    A busy webhook writes a line per patched pod. ``write_line`` writes one without the standard
    library's LogRecord, filters and formatting steps (``direct``), the same text ``format`` would
    make of the record; on the event loop the lines of one turn of the loop go out in one write at
    its end. A text line of ``write_text`` is also made there, from what it was given, with the
    others of its turn: made one after another they find what they touch in the processor's caches,
    where a line made between two requests finds little. A record written the standard way, or a
    flush, hands over the lines held first, so the order is kept."""

    formatter: TextFormatter | JsonFormatter

    def __init__(self, formatter: TextFormatter | JsonFormatter) -> None:
        super().__init__()
        self.setFormatter(formatter)
        self.names = ProjectNames()
        self.addFilter(self.names)
        self.held: list[str | _Later] = []

    def write_line(self, level: int, name: str, template: str, args: tuple[Any, ...], fields: dict[str, Any]) -> None:
        self._hold(self.formatter.line(time.time(), level, name, template, args, fields))

    def write_text(self, level: int, name: str, message: Callable[[Any], str], argument: Any) -> None:
        """A text line (``TextFormatter.prefixed``) of the message ``message(argument)`` gives, its
        values cut and the line escaped, timed now and made at the end of the loop's turn."""
        assert isinstance(self.formatter, TextFormatter)
        self._hold(_Later(time.time(), level, name, message, argument))

    def _hold(self, line: str | _Later) -> None:
        with self.lock:  # type: ignore[union-attr]
            self.held.append(line)
            if len(self.held) > 1:
                return
        try:
            asyncio.get_running_loop().call_soon(self.flush)
        except RuntimeError:  # not on the event loop
            self.flush()

    def emit(self, record: logging.LogRecord) -> None:
        if self.held:
            self.flush()
        super().emit(record)

    def flush(self) -> None:
        with self.lock:  # type: ignore[union-attr]
            if self.held:
                held, self.held = self.held, []
                lines = [line if isinstance(line, str) else self._made(line) for line in held]
                self.stream.write(self.terminator.join(lines) + self.terminator)
            super().flush()

    def _made(self, later: _Later) -> str:
        """The line ``write_text`` was asked for; one whose message cannot be made says so, and the
        other lines of its turn are written all the same."""
        assert isinstance(self.formatter, TextFormatter)
        try:
            message = later.message(later.argument)
        except Exception as err:  # noqa: BLE001 - a bug of ours, shown in the line it spoiled
            message = escape(cut(f"(this line could not be made: {err!r})", MESSAGE_LIMIT))
        return self.formatter.prefixed(later.created, later.level, later.name, message)


class _Later(msgspec.Struct, frozen=True):
    """A text line held to be made at the end of the loop's turn (``ProjectHandler.write_text``)."""

    created: float
    level: int
    name: str
    message: Callable[[Any], str]
    argument: Any


def direct(logger: logging.Logger, level: int) -> ProjectHandler | None:
    """The handler a record of ``logger`` at ``level`` (enabled) reaches, when it is ``configure``'s
    alone and nothing on the way would change the record: then ``write_line`` may write it. None
    when anything else takes the records too (a test's capture, another handler, a filter)."""
    root = logging.root
    if not _reaches_root_alone(logger) or root.filters or len(root.handlers) != 1:
        return None
    handler = root.handlers[0]
    if not isinstance(handler, ProjectHandler) or handler.level > level or handler.filters != [handler.names]:
        return None
    return handler


def _reaches_root_alone(logger: logging.Logger) -> bool:
    """Whether ``logger``'s records reach the root logger with no handler or filter on the way."""
    node: logging.Logger | None = logger
    while node is not None and node.parent is not None:
        if node.handlers or node.filters:
            return False
        node = node.parent if node.propagate else None
    return node is logging.root


def configure(level: str, log_format: str) -> None:
    """One handler on the root logger. Records carry no thread or process names: no format shows
    them, and the standard library documents turning them off to make records cheaper."""
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    handler = ProjectHandler(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
