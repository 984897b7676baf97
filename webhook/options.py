"""Command-line options generated from a settings model, so each option is declared once, and the
options several commands share, declared once each.

The argparse arguments, their help (with the environment variable and the default), the loading
of the parsed values over the environment, and the documented option tables (tested against
the models) all come from the model's fields. Every command reads ``WEBHOOK_<OPTION>``, so an option
of one name is one option, with one variable, wherever it appears.
"""

from __future__ import annotations

import argparse
import re
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BeforeValidator, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from webhook.core.sharing.desired import MAX_CLAIMS_PER_OWNER

SettingsT = TypeVar("SettingsT", bound=BaseSettings)


class OptionError(Exception):
    """A bad option value; the message is one line naming the option and its variable."""


@dataclass(frozen=True, slots=True)
class Option:
    """One field of a settings model, seen as a command-line option."""

    name: str
    field: FieldInfo
    env: str

    @property
    def extra(self) -> dict[str, Any]:
        extra = self.field.json_schema_extra
        return extra if isinstance(extra, dict) else {}

    @property
    def positional(self) -> bool:
        return bool(self.extra.get("positional"))

    @property
    def flag(self) -> str:
        return str(self.extra.get("metavar")) if self.positional else "--" + self.name.replace("_", "-")

    @property
    def flags(self) -> tuple[str, ...]:
        """The option's spellings: a short one first where kubectl has it (``-n``, ``-o``, ``-A``)."""
        short = self.extra.get("short")
        return (str(short), self.flag) if short else (self.flag,)

    @property
    def former(self) -> tuple[str, ...]:
        """Names the option had before, still taken on the command line (and listed in its help
        beside the name) so that scripts written for them keep working."""
        return tuple(str(name) for name in self.extra.get("former", ()))

    @property
    def repeatable(self) -> bool:
        return typing.get_origin(_unwrap(self.field.annotation)) is list and not self.extra.get("comma_list")

    @property
    def is_bool(self) -> bool:
        return _unwrap(self.field.annotation) is bool

    @property
    def choices(self) -> tuple[str, ...] | None:
        annotation = _unwrap(self.field.annotation)
        return typing.get_args(annotation) if typing.get_origin(annotation) is Literal else None

    @property
    def default_text(self) -> str:
        if "default_text" in self.extra:
            return str(self.extra["default_text"])
        default = self.field.get_default(call_default_factory=True)
        if isinstance(default, bool):
            return str(default).lower()
        if isinstance(default, list):
            return ",".join(str(item) for item in default)
        if isinstance(default, float) and default.is_integer():
            return str(int(default))
        return str(default)

    def help_text(self) -> str:
        return f"{self.field.description} [env {self.env}; default {self.default_text}]"


def _unwrap(annotation: Any) -> Any:
    """``X | None`` as ``X``: optional options are simply not given."""
    args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        return args[0]
    return annotation


def options(model: type[BaseSettings]) -> Iterator[Option]:
    """The model's options, a class's own before those it inherits (``serve`` starts with --host)."""
    prefix = str(model.model_config.get("env_prefix", ""))
    names = dict.fromkeys(
        name for cls in model.__mro__ for name in vars(cls).get("__annotations__", {}) if name in model.model_fields
    )
    for name in names:
        yield Option(name, model.model_fields[name], (prefix + name).upper())


def add_arguments(parser: argparse.ArgumentParser, model: type[BaseSettings]) -> None:
    """Arguments whose absence leaves the field to the environment or its default."""
    for option in options(model):
        if option.positional:
            nargs = ("+" if option.field.is_required() else "*") if option.repeatable else (None if option.field.is_required() else "?")
            parser.add_argument(
                option.name, metavar=option.flag, nargs=nargs, default=argparse.SUPPRESS, help=option.field.description
            )
            continue
        kwargs: dict[str, Any] = {"dest": option.name, "default": argparse.SUPPRESS, "help": option.help_text()}
        if option.is_bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        else:
            kwargs["metavar"] = option.extra.get("metavar", option.name.upper())
            if option.repeatable:
                kwargs["action"] = "append"
            if option.choices:
                kwargs["choices"] = option.choices
                kwargs["metavar"] = "|".join(option.choices)
        parser.add_argument(*option.flags, *option.former, **kwargs)


def load(model: type[SettingsT], arguments: argparse.Namespace) -> SettingsT:
    """The settings from the parsed arguments over the environment, or one line saying what is wrong."""
    given = {name: value for name, value in vars(arguments).items() if name in model.model_fields}
    try:
        return model(**given)
    except ValidationError as err:
        raise OptionError(_first_problem(model, err, given)) from None


def _first_problem(model: type[BaseSettings], err: ValidationError, given: dict[str, Any]) -> str:
    problem = err.errors(include_url=False)[0]
    by_name = {option.name: option for option in options(model)}
    option = by_name.get(str(problem["loc"][0])) if problem["loc"] else None
    message = str(problem["msg"])
    if problem["type"] == "value_error":
        message = message.removeprefix("Value error, ")
    if option is None:
        return message
    source = option.flag if option.name in given or option.positional else option.env
    value = problem.get("input")
    shown = "" if value is None or isinstance(value, (dict, list)) else f" {str(value)!r}"
    return f"invalid value{shown} for {source}: {message}"


# --- the options several commands share ----------------------------------------------------------

KiB = 1024
MiB = 1024 * KiB


def split_list(value: Any, separator: str) -> Any:
    """An environment string becomes a list; lists from the command line pass through."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(separator) if part.strip()]
    return value


_NAMESPACE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def namespace_name(value: str) -> str:
    """A namespace name as the API server takes one (a DNS label), refused here rather than by the
    first request that names it."""
    if not _NAMESPACE_NAME.fullmatch(value):
        raise ValueError(f"{value!r} is not one namespace name (a DNS label: lower-case letters, digits and '-')")
    return value


def _namespace_names(values: list[str]) -> list[str]:
    return list(dict.fromkeys(map(namespace_name, values)))


Namespaces = Annotated[
    list[str], NoDecode, BeforeValidator(lambda value: split_list(value, ",")), AfterValidator(_namespace_names)
]
"""A repeatable namespace option (``--namespace``, ``--exclude-namespace``): comma-separated in the
environment, each a namespace name, repeats dropped."""


class CommandSettings(BaseSettings):
    """Base of every command's settings: environment variables are ``WEBHOOK_<OPTION>``."""

    model_config = SettingsConfigDict(env_prefix="WEBHOOK_", extra="forbid", frozen=True)


class LoggingSettings(CommandSettings):
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "info", description="Least severe log level written."
    )
    log_format: Literal["json", "text"] = Field(
        "text", description="Log lines as JSON objects (one per line) or as plain text."
    )


class ContextSettings(CommandSettings):
    """Of every command that reads a cluster: the kubeconfig context, as ``kubectl --context``."""

    context: str | None = Field(
        None,
        description="The kubeconfig context to use (a kubeconfig is then read even in a pod).",
        json_schema_extra={"metavar": "NAME", "default_text": "the current context"},
    )


class ClaimLimitSettings(CommandSettings):
    """The claim reconciler's limit per owner, which the validating webhook warns about: one option
    (and one variable) for both, so that a pod running both sees one value."""

    max_claims_per_owner: int = Field(
        MAX_CLAIMS_PER_OWNER,
        ge=1,
        description=(
            "Most claims the reconciler makes for one owner (a PodCliqueSet, scaling group or PodClique): "
            "an owner whose sharing needs more gets the first N in Grove's order and a Warning Event, "
            "and the validating webhook warns about it at admission."
        ),
        json_schema_extra={"metavar": "N"},
    )
