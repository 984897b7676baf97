"""Field paths and field errors rendered as apimachinery's ``pkg/util/validation/field`` does: rules
build errors here rather than format messages by hand, so every message has Go's one shape."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from webhook.core.gocompat import gojson

_OMIT = object()


class ErrorType(Enum):
    REQUIRED = "Required value"
    FORBIDDEN = "Forbidden"
    INVALID = "Invalid value"
    NOT_FOUND = "Not found"
    DUPLICATE = "Duplicate value"
    NOT_SUPPORTED = "Unsupported value"


@dataclass(frozen=True, slots=True)
class Path:
    text: str = ""

    def child(self, name: str, *more: str) -> Path:
        text = self.text
        for part in (name, *more):
            text = f"{text}.{part}" if text else part
        return Path(text)

    def index(self, i: int) -> Path:
        return Path(f"{self.text}[{i}]")

    def __str__(self) -> str:
        return self.text


class GoString(str):
    """A Go ``string`` value: rendered with ``%q`` (a typed string such as a scope is not)."""


def render_value(value: Any) -> str:
    """A bad value as apimachinery prints it: ``%q`` for a Go string, else as JSON."""
    return gojson.quote(value) if isinstance(value, GoString) else gojson.marshal(value)


@dataclass(frozen=True, slots=True)
class FieldError:
    type: ErrorType
    path: Path
    value: Any = _OMIT
    detail: str = ""

    def body(self) -> str:
        if self.type in (ErrorType.REQUIRED, ErrorType.FORBIDDEN) or self.value is _OMIT:
            text = self.type.value
        else:
            text = f"{self.type.value}: {render_value(self.value)}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.path}: {self.body()}"


def required(path: Path, detail: str) -> FieldError:
    return FieldError(ErrorType.REQUIRED, path, detail=detail)


def forbidden(path: Path, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, path, detail=detail)


def invalid(path: Path, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.INVALID, path, value, detail)


def not_found(path: Path, value: Any) -> FieldError:
    return FieldError(ErrorType.NOT_FOUND, path, value)


def duplicate(path: Path, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, path, value)


def not_supported(path: Path, value: Any, supported: list[str]) -> FieldError:
    quoted = ", ".join(gojson.quote(v) for v in supported)
    return FieldError(ErrorType.NOT_SUPPORTED, path, value, f"supported values: {quoted}")


def aggregate(messages: list[str]) -> str | None:
    """apimachinery's ``ToAggregate().Error()``: duplicates dropped, several joined in brackets."""
    unique = list(dict.fromkeys(messages))
    if not unique:
        return None
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"
