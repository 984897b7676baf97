"""The AdmissionReview seam every webhook answers through (controller-runtime's ``pkg/webhook/admission``).

``answer`` is the one way through, so that the HTTP server and ``webhook review`` give the same
bytes: a body is decoded once, read as the webhook's kind, dispatched on its operation as
controller-runtime dispatches it, and answered in the AdmissionReview version it came in. An
envelope that is no usable review is the caller's fault: HTTP 400 with ``{"error": ...}``."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Iterable
from typing import Any, NamedTuple, Protocol, cast

import orjson
from pydantic import Field, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from webhook.core.gocompat import gojson
from webhook.core.gocompat.fielderrors import aggregate
from webhook.core.model.meta import GoStr, GroupVersionKind, first_problem, MODEL

DEFAULT_API_VERSION = "admission.k8s.io/v1"
SUPPORTED_API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
REVIEW_KIND = "AdmissionReview"
NO_CONTENT = "there is no content to decode"
SHOWN_LENGTH = 80


@dataclass(frozen=True, slots=True, config=MODEL)
class RequestKind:
    group: GoStr = ""
    version: GoStr = ""
    kind: GoStr = ""


@dataclass(frozen=True, slots=True, config=MODEL)
class RequestResource:
    resource: GoStr = ""


@dataclass(frozen=True, slots=True, config=MODEL)
class AdmissionRequest:
    """A review's request, its objects as sent, for the webhook to read as its kind."""

    uid: GoStr = ""
    kind: RequestKind = Field(default_factory=RequestKind)
    resource: RequestResource = Field(default_factory=RequestResource)
    """The plural written (``podcliques``): a subresource's object is of another kind (a ``Scale``)."""
    sub_resource: GoStr = Field(default="", alias="subResource")
    name: GoStr = ""
    namespace: GoStr = ""
    operation: GoStr = ""
    dry_run: bool | None = Field(default=None, alias="dryRun", strict=True)
    object: Any = None
    old_object: Any = Field(default=None, alias="oldObject")
    user_info: Any = Field(default=None, alias="userInfo")
    """As sent, read only by the checks that need the user (``pcs.authorization``)."""
    body: bytes = Field(default=b"", strict=True)
    """The review as sent, for the members Go keeps as written (``gocompat.rawjson``); set by
    ``decode``, whatever the request holds of that name."""


_read_request = TypeAdapter(AdmissionRequest).validate_python


class AdmissionReview(NamedTuple):
    api_version: str
    request: AdmissionRequest


class Rejection(NamedTuple):
    """A body that is no usable AdmissionReview, answered with an HTTP error."""

    status: int
    message: str


def shortened(text: str) -> str:
    """``text`` cut to ``SHOWN_LENGTH`` characters for an error message, its last one kept."""
    return text if len(text) <= SHOWN_LENGTH else f"{text[: SHOWN_LENGTH - 4]}...{text[-1]}"


def _shown(value: Any) -> str:
    """A value from the body for a one-line error, never echoing a large or deeply nested value."""
    if isinstance(value, list | dict):
        return "(an array)" if isinstance(value, list) else "(an object)"
    return shortened(orjson.dumps(value).decode())


def _loads(body: bytes) -> tuple[Any, bytes] | Rejection:
    """The JSON document and the text it was read from: Go's decoder reads bytes that are not
    UTF-8 and lone surrogates as U+FFFD, and decides (orjson refuses both)."""
    try:
        return orjson.loads(body), body
    except orjson.JSONDecodeError as err:
        body = gojson.go_text(body)
        try:
            return orjson.loads(body), body
        except orjson.JSONDecodeError:
            return Rejection(400, f"request body is not valid JSON: {err}")


def decode(body: bytes) -> AdmissionReview | Rejection:
    if not body.strip():
        return Rejection(400, "request body is empty: expected an AdmissionReview")
    loaded = _loads(body)
    if isinstance(loaded, Rejection):
        return loaded
    data, body = loaded
    if not isinstance(data, dict):
        return Rejection(400, "request body must be a JSON object (an AdmissionReview)")
    api_version, kind = data.get("apiVersion", DEFAULT_API_VERSION), data.get("kind", REVIEW_KIND)
    if api_version not in SUPPORTED_API_VERSIONS:
        return Rejection(
            400, f"unsupported AdmissionReview apiVersion {_shown(api_version)}: expected one of {', '.join(SUPPORTED_API_VERSIONS)}"
        )
    if kind != REVIEW_KIND:
        return Rejection(400, f"unsupported kind {_shown(kind)}: expected AdmissionReview")
    request = data.get("request")
    if not isinstance(request, dict):
        return Rejection(400, "AdmissionReview has no request")
    if not isinstance(request.get("uid"), str) or not request["uid"]:
        return Rejection(400, "AdmissionReview request has no uid")
    try:
        return AdmissionReview(api_version, _read_request({**request, "body": body}))
    except ValidationError as err:
        return Rejection(400, f"AdmissionReview is malformed: request.{first_problem(err)}")


class AdmissionResponse(NamedTuple):
    allowed: bool
    code: int
    reason: str = ""
    message: str = ""
    warnings: tuple[str, ...] = ()
    patch: bytes = b""
    note: str = ""
    """For the decision log only, never in the answer: what a patch does (the claims a pod gets)."""

    @property
    def outcome(self) -> str:
        """``patched``, ``allowed``, ``denied`` (for what the object says) or ``error`` (undecided)."""
        if self.patch:
            return "patched"
        if self.allowed:
            return "allowed"
        return "denied" if self.code == 403 else "error"

    def body(self, uid: str) -> dict[str, Any]:
        status: dict[str, Any] = {"code": self.code}
        if self.reason:
            status["reason"] = self.reason
        if self.message:
            status["message"] = self.message
        result: dict[str, Any] = {"uid": uid, "allowed": self.allowed, "status": status}
        if self.patch:
            result["patchType"] = "JSONPatch"
            result["patch"] = base64.b64encode(self.patch).decode("ascii")
        if self.warnings:
            result["warnings"] = list(self.warnings)
        return result


def allowed(warnings: Iterable[str] = ()) -> AdmissionResponse:
    return AdmissionResponse(True, 200, warnings=tuple(warnings))


def denied(errors: Iterable[object], warnings: Iterable[str] = ()) -> AdmissionResponse:
    """Code 403, reason Forbidden: ``errors`` aggregated as apimachinery's ``ToAggregate`` does."""
    message = aggregate([str(e) for e in errors])
    assert message is not None, "denied with no error"
    return AdmissionResponse(False, 403, "Forbidden", message, tuple(warnings))


def errored(code: int, message: str) -> AdmissionResponse:
    """A request that could not be decided (no reason)."""
    return AdmissionResponse(False, code, message=message)


def patched(patch: bytes, warnings: Iterable[str] = (), note: str = "") -> AdmissionResponse:
    return AdmissionResponse(True, 200, warnings=tuple(warnings), patch=patch, note=note)


def decided(errors: Iterable[object], warnings: Iterable[str] = ()) -> AdmissionResponse:
    errors = list(errors)
    return denied(errors, warnings) if errors else allowed(warnings)


def undecodable(field: str, kind: GroupVersionKind, problem: str) -> AdmissionResponse:
    """Code 400 for an object Go's decoder would refuse."""
    return errored(400, f"cannot decode request.{field} as {kind}: {problem}")


def missing(field: str) -> AdmissionResponse:
    return errored(400, f"{NO_CONTENT}: request.{field} is missing")


class Handler(Protocol):
    @property
    def kind(self) -> GroupVersionKind: ...

    def read(self, obj: Any) -> Any:
        """``object`` or ``oldObject`` as the webhook's kind; ``ValidationError`` where Go's would fail."""


class Validator(Handler, Protocol):
    """A validating webhook (controller-runtime's ``CustomValidator``)."""

    async def create(self, request: AdmissionRequest, obj: Any) -> AdmissionResponse: ...

    async def update(self, request: AdmissionRequest, obj: Any, old: Any) -> AdmissionResponse: ...

    async def delete(self, request: AdmissionRequest, old: Any) -> AdmissionResponse: ...


class Defaulter(Handler, Protocol):
    """A mutating webhook (controller-runtime's ``CustomDefaulter``): any operation but DELETE."""

    async def default(self, request: AdmissionRequest, obj: Any) -> AdmissionResponse: ...


def _stated(obj: Any) -> tuple[str, str]:
    """The (apiVersion, kind) an object states, each empty where it states no text."""
    if not isinstance(obj, dict):
        return "", ""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    return (api_version if isinstance(api_version, str) else ""), (kind if isinstance(kind, str) else "")


def _other_kind(obj: Any, expected: GroupVersionKind) -> GroupVersionKind | None:
    """The kind an object names if not the webhook's, filled in as Go does (``gvkWithDefaults``)."""
    api_version, kind = _stated(obj)
    if (not api_version and not kind) or (api_version, kind) == (expected.api_version, expected.kind):
        return None
    group, _, version = api_version.rpartition("/")
    if not version and (not group or group == expected.group):
        group, version = group or expected.group, expected.version
    actual = GroupVersionKind(group, version, kind or expected.kind)
    return actual if actual != expected else None


def kind_mismatch(request: AdmissionRequest, expected: GroupVersionKind) -> AdmissionResponse | None:
    """Code 400 for a review or object of another kind: controller-runtime refuses to decode it."""
    stated = GroupVersionKind(request.kind.group, request.kind.version, request.kind.kind)
    actual = stated if stated.kind and stated != expected else None
    actual = actual or _other_kind(request.object, expected) or _other_kind(request.old_object, expected)
    if actual is None:
        return None
    return errored(400, f"unable to decode {shortened(str(actual))} into {expected}")


async def decide(handler: Handler, request: AdmissionRequest) -> AdmissionResponse:
    read = kind_mismatch(request, handler.kind) or _read_objects(handler, request)
    if isinstance(read, AdmissionResponse):
        return read
    call = _dispatch(handler, request, *read)
    return call if isinstance(call, AdmissionResponse) else await call


def _read_objects(handler: Handler, request: AdmissionRequest) -> tuple[Any, Any] | AdmissionResponse:
    """``object`` and ``oldObject`` as the webhook reads them (None where absent), or code 400."""
    read = []
    for field, value in (("object", request.object), ("oldObject", request.old_object)):
        try:
            read.append(None if value is None else handler.read(value))
        except ValidationError as err:
            return undecodable(field, handler.kind, first_problem(err))
    return read[0], read[1]


def _dispatch(handler: Handler, request: AdmissionRequest, obj: Any, old: Any) -> AdmissionResponse | Awaitable[AdmissionResponse]:
    """The answer, or the call to await, as controller-runtime's ``*ForType`` handlers dispatch."""
    operation = request.operation
    if callable(getattr(handler, "default", None)):  # a runtime Protocol check costs more than a decision
        return _default(cast(Defaulter, handler), request, obj)
    validator = cast(Validator, handler)
    if operation in ("CREATE", "UPDATE") and obj is None:
        return missing("object")
    if operation in ("DELETE", "CONNECT"):
        return validator.delete(request, old) if operation == "DELETE" else allowed()
    if operation not in ("CREATE", "UPDATE"):
        return errored(400, f"unknown operation {gojson.quote(operation)}")
    return validator.create(request, obj) if operation == "CREATE" else validator.update(request, obj, old)


def _default(handler: Defaulter, request: AdmissionRequest, obj: Any) -> AdmissionResponse | Awaitable[AdmissionResponse]:
    if request.operation == "DELETE" or (obj is None and request.operation != "CREATE"):
        return allowed()
    return missing("object") if obj is None else handler.default(request, obj)


class Answer(NamedTuple):
    """The HTTP status and JSON body, and what metrics and logs say of them."""

    status: int
    body: dict[str, Any]
    operation: str = ""
    outcome: str = "rejected"
    """``AdmissionResponse.outcome``, or ``rejected`` (HTTP 4xx)."""
    uid: str = ""
    name: str = ""
    """``namespace/name`` of the object, as the request says it."""
    error: BaseException | None = None
    """The exception a webhook raised (answered code 500)."""
    note: str = ""
    """What the decision log says of a patch (``AdmissionResponse.note``)."""

    def content(self) -> bytes:
        return orjson.dumps(self.body)

    @classmethod
    def rejected(cls, rejection: Rejection) -> Answer:
        return cls(rejection.status, {"error": rejection.message})


async def answer(handler: Handler, webhook: str, body: bytes) -> Answer:
    """The answer of ``handler`` (the webhook named ``webhook``) to ``body``. Never raises."""
    review = decode(body)
    if isinstance(review, Rejection):
        return Answer.rejected(review)
    request = review.request
    error: BaseException | None = None
    try:
        response = await decide(handler, request)
    except Exception as err:  # noqa: BLE001 - a bug of ours: answered, and handed back to be logged
        response = errored(500, f"internal error in the {webhook} webhook; the server log has the details")
        error = err
    document = {"apiVersion": review.api_version, "kind": REVIEW_KIND, "response": response.body(request.uid)}
    name = f"{request.namespace}/{request.name}" if request.namespace else request.name
    return Answer(200, document, request.operation, response.outcome, request.uid, name, error, response.note)
