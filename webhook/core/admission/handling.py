"""One review, from the bytes of its body to the bytes of its answer: the seam every webhook uses.

The body is decoded once (``request.decode``), as far as the handler reads it
(``Handler.objects``, ``envelope``); a review of another kind than the handler's is
answered without it; otherwise the handler decides (``Handler.handle``, controller-runtime's
``Handle(ctx, Request) Response``). A handler that raises is a bug of ours, not the caller's: the
review is answered not allowed, code 500, with the uid already decoded, and the exception is
handed back for the caller to log. The HTTP server and ``webhook review`` both answer through
``answer``, so they give the same bytes.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec
import orjson

from webhook.core.admission import response
from webhook.core.admission.envelope import Envelope
from webhook.core.admission.request import (
    DEFAULT_API_VERSION,
    AdmissionRequest,
    AdmissionReview,
    Rejection,
    decode,
    shortened,
)
from webhook.core.model.meta import DecodeWhole, GroupVersionKind


class Handler(Protocol):
    @property
    def kind(self) -> GroupVersionKind:
        """The one kind the handler decides."""

    @property
    def objects(self) -> Envelope | None:
        """How much of a body the handler reads (``envelope``); None for the whole body."""

    async def handle(self, request: AdmissionRequest) -> response.AdmissionResponse:
        """The answer to one request of ``kind``."""


class Answer(msgspec.Struct, frozen=True):
    """A webhook's answer: the HTTP status and JSON body, and what metrics and logs say of it."""

    status: int
    body: dict[str, Any]
    operation: str = ""
    outcome: str = "rejected"
    """``allowed``, ``patched``, ``denied``, ``error`` (HTTP 200, not decided) or ``rejected`` (HTTP 4xx)."""
    uid: str = ""
    name: str = ""
    """``namespace/name`` of the object, as the request says it."""
    error: BaseException | None = None
    """The exception a handler raised (answered code 500)."""
    note: str = ""
    """What the decision log says of a patch (``AdmissionResponse.note``)."""

    def content(self) -> bytes:
        return orjson.dumps(self.body)

    @classmethod
    def rejected(cls, rejection: Rejection) -> Answer:
        return cls(rejection.status, {"error": rejection.message})


def _other_kind(obj: Any, expected: GroupVersionKind) -> GroupVersionKind | None:
    """The apiVersion and kind an object states, when they are not the endpoint's: filled in from
    the endpoint's where left out, as Go's decoder fills them in from the type it decodes into
    (``gvkWithDefaults``). None for an object that states the endpoint's kind, or none at all (or
    is not an object: reading it says so)."""
    stated = _stated(obj)
    if stated is None or stated == (expected.api_version, expected.kind):
        return None
    api_version, kind = stated
    group, _, version = api_version.rpartition("/")
    if not version and not group:
        group, version = expected.group, expected.version
    elif not version and group == expected.group:
        version = expected.version
    actual = GroupVersionKind(group, version, kind or expected.kind)
    return actual if actual != expected else None


def _stated(obj: Any) -> tuple[str, str] | None:
    """The (apiVersion, kind) an object states, each empty when it is not text; None for none."""
    if not isinstance(obj, dict):
        return None
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    api_version = api_version if isinstance(api_version, str) else ""
    kind = kind if isinstance(kind, str) else ""
    return (api_version, kind) if api_version or kind else None


def kind_mismatch(request: AdmissionRequest, expected: GroupVersionKind) -> response.AdmissionResponse | None:
    """A review of another kind than the endpoint serves (a misrouted webhook), or whose object or
    old object says it is of another kind, is answered, not decided: controller-runtime's decoder
    refuses to decode one kind into another."""
    actual = request.kind if request.kind.kind and request.kind != expected else None
    actual = actual or _other_kind(request.object, expected) or _other_kind(request.old_object, expected)
    if actual is None:
        return None
    return response.errored(400, f"unable to decode {shortened(str(actual))} into {expected}")


def _object_name(request: AdmissionRequest) -> str:
    return f"{request.namespace}/{request.name}" if request.namespace else request.name


async def answer(handler: Handler, webhook: str, body: bytes) -> Answer:
    """The answer of ``handler`` (the webhook named ``webhook``) to ``body``. Never raises: a bug
    of ours is answered code 500 and handed back in ``Answer.error``."""
    try:
        return await _answer(handler, webhook, body, handler.objects)
    except DecodeWhole:
        # A member kept as JSON text that orjson then refused (a number past a double's range), or
        # an object read in parts whose reading needs the whole of it: answered as the body
        # decoded whole is, the same as before it was read in parts.
        return await _answer(handler, webhook, body, None)


async def _answer(handler: Handler, webhook: str, body: bytes, objects: Envelope | None) -> Answer:
    try:
        review = decode(body, objects)
    except Exception as err:  # noqa: BLE001 - decoding has no such bug known; answered all the same
        return Answer(200, response.review_body(DEFAULT_API_VERSION, "", _internal(webhook)), outcome="error", error=err)
    if isinstance(review, Rejection):
        return Answer.rejected(review)
    return await answer_review(handler, webhook, review)


async def answer_review(handler: Handler, webhook: str, review: AdmissionReview) -> Answer:
    """The answer of ``handler`` to a decoded review."""
    request = review.request
    error: BaseException | None = None
    decided = kind_mismatch(request, handler.kind)
    if decided is None:
        try:
            decided = await handler.handle(request)
        except DecodeWhole:
            raise
        except Exception as err:  # noqa: BLE001 - a bug of ours: answered, and handed back to be logged
            decided, error = _internal(webhook), err
    return Answer(
        200,
        response.review_body(review.api_version, request.uid, decided),
        request.operation,
        decided.outcome,
        request.uid,
        _object_name(request),
        error,
        decided.note,
    )


def _internal(webhook: str) -> response.AdmissionResponse:
    return response.errored(500, f"internal error in the {webhook} webhook; the server log has the details")
