"""The options several commands share, declared once each: one option, with one variable, wherever
it appears."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from webhook.core.sharing.desired import MAX_CLAIMS_PER_OWNER

KiB = 1024
MiB = 1024 * KiB


def split_list(value: Any, separator: str) -> Any:
    """An environment string becomes a list; lists from the command line pass through."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(separator) if part.strip()]
    return value


_NAMESPACE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def namespace_name(value: str) -> str:
    """A namespace name (a DNS label), refused here rather than by the first request naming it."""
    if not _NAMESPACE_NAME.fullmatch(value):
        raise ValueError(f"{value!r} is not one namespace name (a DNS label: lower-case letters, digits and '-')")
    return value


def _namespace_names(values: list[str]) -> list[str]:
    return list(dict.fromkeys(map(namespace_name, values)))


Namespaces = Annotated[
    list[str], NoDecode, BeforeValidator(lambda value: split_list(value, ",")), AfterValidator(_namespace_names)
]
"""A repeatable namespace option: comma-separated in the environment, repeats dropped."""

Seconds = Annotated[float, Field(gt=0, json_schema_extra={"metavar": "SECONDS"})]
Bytes = Annotated[int, Field(json_schema_extra={"metavar": "BYTES"})]


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
    """The reconciler's limit per owner, which the validating webhook warns about: one option for
    both, so that a pod running both sees one value."""

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
