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
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from pydantic_settings import BaseSettings

from webhook import __version__, options
from webhook.errors import CommandError
from webhook.policy import PolicySettings
from webhook.reconciler.settings import ReconcileSettings
from webhook.registration import UnregisterSettings
from webhook.certificate_settings import CertsSettings
from webhook.claims import ClaimsSettings
from webhook.settings import ReviewSettings, ServeSettings
from webhook.status import StatusSettings

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
    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message, USAGE_EXIT)
        self.prog = prog


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage mistake as one line instead of the usage text and a message."""

    def error(self, message: str) -> NoReturn:
        if message == "the following arguments are required: COMMAND":
            message = f"no command given: choose one of {', '.join(c.name for c in COMMANDS)}"
        raise UsageError(self.prog, f"{message} (see '{self.prog} --help')")


PLUGIN_PREFIX = "kubectl-"


def program(argv0: str) -> str:
    """The program as it was run, for usage lines: ``python -m webhook``, ``kubectl grove-sharing``
    (kubectl runs a plugin ``kubectl-grove_sharing`` for ``kubectl grove-sharing``) or the
    executable's name."""
    name = os.path.basename(argv0)
    if name == "__main__.py":
        return f"python -m {os.path.basename(os.path.dirname(argv0)) or 'webhook'}"
    if name.startswith(PLUGIN_PREFIX):
        return "kubectl " + name.removeprefix(PLUGIN_PREFIX).replace("_", "-")
    return name or "webhook"


def build_parser(prog: str = "webhook") -> Parser:
    parser = Parser(
        prog=prog,
        description="Admission webhooks and tools for Grove's hierarchical DRA resource sharing.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub = subcommands.add_parser(command.name, help=command.summary, description=command.summary)
        options.add_arguments(sub, command.settings)
    return parser


def _before_the_command(prog: str, argv: Sequence[str]) -> None:
    """argparse reports an option given before the command as a missing command; this names it."""
    for token in argv:
        if not token.startswith("-") or token in ("-h", "--help", "--version"):
            return
        flag = token.split("=", 1)[0]
        owners = [c.name for c in COMMANDS if flag in {f for o in options.options(c.settings) for f in o.flags}]
        if not owners:
            raise UsageError(prog, f"unrecognized arguments: {token} (see '{prog} --help')")
        raise UsageError(
            prog,
            f"{flag} is an option of {', '.join(owners)}: give it after the command, as in "
            f"'{prog} {owners[0]} {flag} ...' (see '{prog} {owners[0]} --help')",
        )


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

