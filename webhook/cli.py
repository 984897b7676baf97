"""The ``webhook`` command line: one subcommand per part, each with its settings model.

A subcommand is a row of ``COMMANDS``: its name, a one-line summary, the settings model its options
are generated from (``webhook.options``) and the function that runs it, given as ``module:function``
so that ``--help`` and the other commands do not import the web server or the Kubernetes client.
The function takes the loaded settings and returns the exit code; a ``CommandError`` ends the
command with one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from pydantic_settings import BaseSettings

from webhook import __version__, options
from webhook.errors import CommandError
from webhook.policy.settings import PolicySettings
from webhook.reconciler.settings import ReconcileSettings
from webhook.registration.settings import UnregisterSettings
from webhook.settings import CertsSettings, ClaimsSettings, ReviewSettings, ServeSettings

USAGE_EXIT = 2


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    summary: str
    settings: type[BaseSettings]
    run: str

    def function(self) -> Callable[[Any], int]:
        module, _, name = self.run.partition(":")
        function: Callable[[Any], int] = getattr(importlib.import_module(module), name)
        return function


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
        "webhook.registration.unregister:unregister",
    ),
)


class UsageError(CommandError):
    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message, USAGE_EXIT)
        self.prog = prog


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage mistake as one line instead of the usage text and a message."""

    def error(self, message: str) -> NoReturn:
        if message == "the following arguments are required: COMMAND":
            message = f"no command given: choose one of {', '.join(c.name for c in COMMANDS)}"
        raise UsageError(self.prog, f"{message} (see '{self.prog} --help')")


def build_parser() -> Parser:
    parser = Parser(
        prog="webhook",
        description="Admission webhooks and tools for Grove's hierarchical DRA resource sharing.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub = subcommands.add_parser(command.name, help=command.summary, description=command.summary)
        options.add_arguments(sub, command.settings)
    return parser


def _before_the_command(argv: Sequence[str]) -> None:
    """argparse reports an option given before the command as a missing command; this names it."""
    for token in argv:
        if not token.startswith("-") or token in ("-h", "--help", "--version"):
            return
        flag = token.split("=", 1)[0]
        owners = [c.name for c in COMMANDS if flag in {o.flag for o in options.options(c.settings)}]
        if not owners:
            raise UsageError("webhook", f"unrecognized arguments: {token} (see 'webhook --help')")
        raise UsageError(
            "webhook",
            f"{flag} is an option of {', '.join(owners)}: give it after the command, as in "
            f"'webhook {owners[0]} {flag} ...' (see 'webhook {owners[0]} --help')",
        )


def main(argv: Sequence[str] | None = None) -> int:
    prog = "webhook"
    try:
        _before_the_command(sys.argv[1:] if argv is None else argv)
        arguments, unknown = build_parser().parse_known_args(argv)
        command = next(c for c in COMMANDS if c.name == arguments.command)
        prog = f"webhook {command.name}"
        if unknown:
            raise UsageError(prog, f"unrecognized arguments: {' '.join(unknown)} (see '{prog} --help')")
        try:
            settings = options.load(command.settings, arguments)
        except options.OptionError as err:
            raise CommandError(str(err), USAGE_EXIT) from None
        return command.function()(settings)
    except UsageError as err:
        print(f"{err.prog}: error: {err.line()}", file=sys.stderr)
        return err.exit_code
    except CommandError as err:
        print(f"{prog}: error: {err.line()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
