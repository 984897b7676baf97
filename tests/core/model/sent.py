"""A PodCliqueSet read as the validating webhook reads one from a review's body: decoded in parts
by the declarations its envelope gives the object (``PodCliqueSetJson``), and from the body decoded
whole where those do not take it or its reading needs the whole object (``DecodeWhole``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import orjson

from webhook.core.model.meta import DecodeWhole
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.reader import read_podcliqueset
from webhook.core.pcs.handler import PodCliqueSetJson

AS_SENT = msgspec.json.Decoder(PodCliqueSetJson)


def in_parts(body: bytes) -> Any:
    """The object as the envelope decodes it, or None where its declarations do not take it."""
    try:
        return AS_SENT.decode(body)
    except msgspec.DecodeError:
        return None


def read_as_sent(body: bytes, read: Callable[[Any], PodCliqueSet] = read_podcliqueset) -> PodCliqueSet:
    """The object of ``body`` as the validating webhook reads it (``read``: how it reads one)."""
    obj = in_parts(body) if body.isascii() else None
    if obj is not None:
        try:
            return read(obj)
        except DecodeWhole:
            pass
    return read(orjson.loads(body))
