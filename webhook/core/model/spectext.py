"""A spec handed over as its JSON text, as the validating webhook decodes a review: the key a
reader remembers it by (``spec_text``), and its parsing no further than it is read
(``spec_parsed``) when msgspec's one pass (``wire``) does not take it.

Members kept as JSON text are parsed as orjson parses a whole body (``parsed``): a number orjson
refuses raises ``NotJson``, and the body is then decoded whole and refused as before.
"""

from __future__ import annotations

from typing import Any, TypedDict

import msgspec
import orjson

from webhook.core.model.meta import NotJson

SpecJson = dict[str, Any] | msgspec.Raw
"""A spec parsed, or as its JSON text."""


LARGEST_KEY = 64 * 1024
"""Bytes of spec JSON, at most, worth remembering a spec by."""


def spec_text(spec: SpecJson) -> bytes | None:
    """The spec's JSON, as a key to remember what was read of it by: None for one larger than
    ``LARGEST_KEY``, or nested too deep to write (it is read every time)."""
    if type(spec) is msgspec.Raw:
        return bytes(spec) if len(spec) <= LARGEST_KEY else None
    try:
        text = orjson.dumps(spec)
    except orjson.JSONEncodeError:
        return None
    return text if len(text) <= LARGEST_KEY else None


def parsed(text: msgspec.Raw) -> Any:
    """A member kept as its JSON text, parsed as orjson parses a whole body (a view: no copy)."""
    try:
        return orjson.loads(memoryview(text))
    except orjson.JSONDecodeError:
        raise NotJson from None


class _CliqueSpecJson(TypedDict, total=False):
    replicas: Any
    autoScalingConfig: Any


class _CliqueJson(TypedDict, total=False):
    name: Any
    labels: Any
    resourceSharing: Any
    spec: _CliqueSpecJson | None


class _TemplateJson(TypedDict, total=False):
    resourceSharing: Any
    cliques: list[_CliqueJson] | None
    podCliqueScalingGroups: Any
    resourceClaimTemplates: msgspec.Raw


class _SpecJson(TypedDict, total=False):
    """The members of a spec ``read_spec`` reads, a clique's ``podSpec`` skipped. Members declared
    as any JSON read as orjson reads them but for numbers past 64 bits or a double's range, which
    msgspec reads otherwise: where ``read_spec`` reads one, it is no value it takes, and the spec
    goes to the schema as orjson parses it (refused as before). The templates are left to orjson."""

    replicas: Any
    template: _TemplateJson | None


_SPEC = msgspec.json.Decoder(_SpecJson)


def spec_parsed(text: msgspec.Raw) -> Any:
    """A spec kept as its JSON text, decoded no further than ``read_spec`` reads it; parsed whole
    (``parsed``) where it is not of the shape declared, or not ASCII (skipped text is not checked
    as UTF-8), so that reading it then says what is unusual about it."""
    if bytes(text).isascii():
        try:
            return _SPEC.decode(text)
        except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
            pass
    return parsed(text)
