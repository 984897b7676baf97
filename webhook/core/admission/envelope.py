"""A review's body decoded no further than its webhook reads it.

A review is mostly its object, and a webhook reads little of it: the pod webhook a pod's labels,
names and claim lists, not its images, env or volumes; the PodCliqueSet webhook a spec's resource
sharing, not its cliques' pod templates. Decoding the whole body into Python objects costs more
than anything the webhooks then do with it. So each webhook declares the shape of the objects it
reads (``Handler.objects``: typed dicts and msgspec structs, as the models of ``model.pod`` and
``model.wire`` are), and the body is decoded into that shape by msgspec, which skips every other
member without making an object of it, and hands a member declared ``msgspec.Raw`` over as its JSON
text.

Only the usual body is read so: ASCII (skipped text is not checked as UTF-8) and of the declared
types. Members read as any JSON that a webhook reads on (``userInfo``, a PodCliqueSet's metadata)
are kept as text for orjson, which reads a number past 64 bits as a float where msgspec keeps an
integer: they read as in a body decoded whole. For any other, ``read`` gives None and the caller decodes the body whole
(``request.decode``), so that every refusal keeps its message and every unusual member its reading.
"""

from __future__ import annotations

from typing import Any, TypedDict

import msgspec

from webhook.core.model.meta import GroupVersionKind

Envelope = msgspec.json.Decoder[dict[str, Any]]
"""Decodes an AdmissionReview whose objects have one declared shape."""


class Resource(msgspec.Struct, frozen=True, gc=False):
    """``request.resource``: only the plural is read."""

    resource: str = ""


def envelope(objects: Any) -> Envelope:
    """The decoder of a review whose ``object`` and ``oldObject`` have the shape ``objects``, and
    whose request members have the types ``request.decode`` takes (a member of another type, or
    ``null``, sends the body to be decoded whole, where it is read as Go reads it)."""
    Request = TypedDict(  # noqa: UP013 - a shape made for each webhook's objects, named as the body names it
        "Request",
        {
            "uid": str,
            "kind": GroupVersionKind,
            "resource": Resource,
            "subResource": str,
            "name": str,
            "namespace": str,
            "operation": str,
            "dryRun": bool | None,
            "userInfo": msgspec.Raw,
            "object": objects | None,
            "oldObject": objects | None,
        },
        total=False,
    )
    Review = TypedDict("Review", {"apiVersion": Any, "kind": Any, "request": Request}, total=False)  # noqa: UP013
    return msgspec.json.Decoder(Review)


def read(decoder: Envelope, body: bytes) -> dict[str, Any] | None:
    """The body in the declared shape, or None when it is not the usual body."""
    if not body.isascii():
        return None
    try:
        return decoder.decode(body)
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        return None
