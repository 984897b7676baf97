"""The ``webhook`` command line: one subcommand per row of ``COMMANDS``, its options generated from
its settings model so that each is declared once (the argparse arguments, their help with the
environment variable and the default, the loading over the environment, the documented option
tables). A command's function is named ``module:function``, so that ``--help`` and the other
commands do not import the web server or the Kubernetes client.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import types
import typing
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, TypeVar

from pydantic import ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from webhook import __version__
from webhook.errors import USAGE_EXIT, CommandError
from webhook.policy import PolicySettings
from webhook.reconciler import ReconcileSettings
from webhook.registration import UnregisterSettings
from webhook.claims import ClaimsSettings
from webhook.settings import CertsSettings, ReviewSettings, ServeSettings
from webhook.status import StatusSettings

SettingsT = TypeVar("SettingsT", bound=BaseSettings)


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    summary: str
    settings: type[BaseSettings]
    run: str
    """``module:function``: the function takes the loaded settings and returns the exit code."""


COMMANDS: tuple[Command, ...] = (
    Command("serve", "Serve the admission webhooks over HTTPS.", ServeSettings, "webhook.server.run:serve"),
    Command(
        "review",
        "Decide one AdmissionReview offline, exactly as the server would, and print the response "
        "(exit 0 allowed, 1 denied, 2 unusable input).",
        ReviewSettings,
        "webhook.review:review",
    ),
    Command(
        "claims",
        "List the ResourceClaims PodCliqueSet manifests make and each pod's claims, with the "
        "validating webhook's warnings (exit 0, 1 denied, 2 unusable input).",
        ClaimsSettings,
        "webhook.claims:claims",
    ),
    Command(
        "status",
        "Say, for each PodCliqueSet in the cluster, which shared claims are missing, stale or not Grove's, "
        "which pods lack claims or wait on them, and why (exit 0 all well, 1 something wrong, 2 unusable).",
        StatusSettings,
        "webhook.status.command:status",
    ),
    Command(
        "policy",
        "Print a ValidatingAdmissionPolicy and its binding with which the API server denies what the "
        "validating webhook denies, without calling it.",
        PolicySettings,
        "webhook.policy.command:policy_command",
    ),
    Command(
        "certs",
        "Make a development CA and a serving certificate signed by it (kept when still valid).",
        CertsSettings,
        "webhook.certs:certs",
    ),
    Command(
        "reconcile",
        "Create, adopt and clean up the shared ResourceClaims of every PodCliqueSet (the sidecar).",
        ReconcileSettings,
        "webhook.reconciler.command:reconcile",
    ),
    Command(
        "unregister",
        "Delete the release's ValidatingWebhookConfiguration and MutatingWebhookConfiguration (the "
        "chart's pre-delete hook), so that no webhook is left pointing at pods that are gone.",
        UnregisterSettings,
        "webhook.registration.configurations:unregister",
    ),
)


class UsageError(CommandError):
    """A usage mistake, said by ``prog`` and pointing at the help of ``see`` (``prog`` unless given)."""

    def __init__(self, prog: str, message: str, see: str | None = None) -> None:
        super().__init__(f"{message} (see '{see or prog} --help')", USAGE_EXIT)
        self.prog = prog


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage mistake as one line instead of the usage text and a message."""

    def error(self, message: str) -> NoReturn:
        if message == "the following arguments are required: COMMAND":
            message = f"no command given: choose one of {', '.join(c.name for c in COMMANDS)}"
        raise UsageError(self.prog, message)


PLUGIN_PREFIX = "kubectl-"


def program(argv0: str) -> str:
    """The program as it was run, for usage lines: ``python -m webhook``, ``kubectl grove-sharing``
    (the plugin ``kubectl-grove_sharing``) or the executable's name."""
    name = os.path.basename(argv0)
    if name == "__main__.py":
        return f"python -m {os.path.basename(os.path.dirname(argv0)) or 'webhook'}"
    if name.startswith(PLUGIN_PREFIX):
        return "kubectl " + name.removeprefix(PLUGIN_PREFIX).replace("_", "-")
    return name or "webhook"


def build_parser(prog: str = "webhook") -> Parser:
    description = "Admission webhooks and tools for Grove's hierarchical DRA resource sharing."
    parser = Parser(prog=prog, description=description)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub = subcommands.add_parser(command.name, help=command.summary, description=command.summary)
        add_arguments(sub, command.settings)
    return parser


def _before_the_command(prog: str, argv: Sequence[str]) -> None:
    """argparse reports an option given before the command as a missing command; this names it."""
    token = argv[0] if argv else ""
    if not token.startswith("-") or token in ("-h", "--help", "--version"):
        return
    flag = token.split("=", 1)[0]
    owners = [c.name for c in COMMANDS if flag in {f for o in options(c.settings) for f in o.flags}]
    if not owners:
        raise UsageError(prog, f"unrecognized arguments: {token}")
    as_in = f"{prog} {owners[0]}"
    raise UsageError(prog, f"{flag} is an option of {', '.join(owners)}: give it after the command, as in '{as_in} {flag} ...'", as_in)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command of ``argv`` (the process's arguments when None, usage then naming the
    program as it was run; ``webhook`` when called with arguments, as tests and scripts do)."""
    prog = program(sys.argv[0]) if argv is None else "webhook"
    try:
        _before_the_command(prog, sys.argv[1:] if argv is None else argv)
        arguments, unknown = build_parser(prog).parse_known_args(argv)
        command = next(c for c in COMMANDS if c.name == arguments.command)
        prog = f"{prog} {command.name}"
        if unknown:
            raise UsageError(prog, f"unrecognized arguments: {' '.join(unknown)}")
        settings = load(command.settings, arguments)
        module, _, function = command.run.partition(":")
        exit_code: int = getattr(importlib.import_module(module), function)(settings)
        return exit_code
    except CommandError as err:
        print(f"{err.prog if isinstance(err, UsageError) else prog}: error: {err.line()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130


# --- options generated from a settings model ------------------------------------------------------

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
        help = f"{option.field.description} [env {option.env}; default {option.default_text}]"
        kwargs: dict[str, Any] = {"dest": option.name, "default": argparse.SUPPRESS, "help": help}
        if option.is_bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        else:
            kwargs["metavar"] = option.extra.get("metavar", option.name.upper())
            if option.repeatable:
                kwargs["action"] = "append"
            if option.choices:
                kwargs["choices"] = option.choices
                kwargs["metavar"] = "|".join(option.choices)
        # Former names are still taken, so that scripts written for them keep working.
        parser.add_argument(*option.flags, *map(str, option.extra.get("former", ())), **kwargs)


def load(model: type[SettingsT], arguments: argparse.Namespace) -> SettingsT:
    """The settings from the parsed arguments over the environment, or one line naming the option
    (or its variable) and what is wrong."""
    given = {name: value for name, value in vars(arguments).items() if name in model.model_fields}
    try:
        return model(**given)
    except ValidationError as err:
        raise CommandError(_first_problem(model, err, given), USAGE_EXIT) from None


def _first_problem(model: type[BaseSettings], err: ValidationError, given: dict[str, Any]) -> str:
    problem = err.errors(include_url=False)[0]
    by_name = {option.name: option for option in options(model)}
    option = by_name.get(str(problem["loc"][0])) if problem["loc"] else None
    message = str(problem["msg"]).removeprefix("Value error, ")  # a validator's ValueError
    if option is None:
        return message
    source = option.flag if option.name in given or option.positional else option.env
    value = problem.get("input")
    shown = "" if value is None or isinstance(value, (dict, list)) else f" {str(value)!r}"
    return f"invalid value{shown} for {source}: {message}"
