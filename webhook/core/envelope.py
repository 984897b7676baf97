"""Reading an AdmissionReview body, and the ``Decision`` every webhook returns.

Both webhooks read their body the same way: JSON, an AdmissionReview of a supported version, a
request with a uid, and an object of the endpoint's kind. Problems with the envelope are the
caller's fault and answered with HTTP 400 and ``{"error": ...}``; problems with the object are
answered, as controller-runtime does, with HTTP 200 and ``allowed: false`` (code 400) so the API
server shows the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from pydantic import ValidationError

from webhook.core import admission
from webhook.core.admission import AdmissionReview, Envelope, GroupVersionKind

DEFAULT_API_VERSION = "admission.k8s.io/v1"
ReviewT = TypeVar("ReviewT", bound=AdmissionReview[Any])


@dataclass(frozen=True, slots=True)
class Decision:
    """What a webhook answers: the HTTP status, the JSON body and the labels metrics count it by."""

    status: int
    body: dict[str, Any]
    operation: str = ""
    outcome: str = ""
    """``allowed``, ``patched``, ``denied``, ``error`` (HTTP 200, not decided) or ``rejected`` (HTTP 4xx)."""

    def content(self) -> bytes:
        return orjson.dumps(self.body)


def rejected(message: str, status: int = 400) -> Decision:
    """An unusable request: no AdmissionReview to answer, so a plain JSON error."""
    return Decision(status, {"error": message}, outcome="rejected")


def answer(envelope: Envelope | AdmissionReview[Any], response: admission.Response) -> Decision:
    """The response AdmissionReview for a request, with the outcome read off the response."""
    if response.get("patch"):
        outcome = "patched"
    elif response["allowed"]:
        outcome = "allowed"
    elif response["status"]["code"] == 403:
        outcome = "denied"
    else:
        outcome = "error"
    body = admission.review(envelope.api_version, envelope.request.uid, response)
    return Decision(200, body, envelope.request.operation, outcome)


@dataclass(frozen=True, slots=True)
class ExpectedKind:
    """The one kind an endpoint serves, e.g. ``grove.io/v1alpha1, Kind=PodCliqueSet``."""

    group: str
    version: str
    kind: str

    def __str__(self) -> str:
        return str(GroupVersionKind(group=self.group, version=self.version, kind=self.kind))

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def mismatch(self, actual: GroupVersionKind) -> bool:
        return (actual.group, actual.version, actual.kind) != (self.group, self.version, self.kind)


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def describe(err: ValidationError, skip: int = 0) -> str:
    """The first problem pydantic found, as ``path: problem`` (paths in the object's own terms)."""
    first = err.errors(include_url=False)[0]
    where = _location(tuple(first["loc"])[skip:])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def _other_kind(obj: Any, expected: ExpectedKind) -> GroupVersionKind | None:
    """The apiVersion and kind an object states, when they are not the endpoint's: filled in from
    the endpoint's where left out, as Go's decoder fills them in from the type it decodes into
    (``gvkWithDefaults``). None for an object that states the endpoint's kind, or none at all (or
    is not an object: the model reports that)."""
    if not isinstance(obj, dict):
        return None
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    api_version = api_version if isinstance(api_version, str) else ""
    kind = kind if isinstance(kind, str) else ""
    if api_version == expected.api_version and kind == expected.kind or not (api_version or kind):
        return None
    group, _, version = api_version.rpartition("/")
    if not version and not group:
        group, version = expected.group, expected.version
    elif not version and group == expected.group:
        version = expected.version
    actual = GroupVersionKind(group=group, version=version, kind=kind or expected.kind)
    return actual if expected.mismatch(actual) else None


SHOWN_LENGTH = 80


def shown(value: Any) -> str:
    """A value from the body, as JSON, for an error message: arrays and objects by their type and
    long text cut short, so that the one-line error never echoes a large or deeply nested value
    (orjson cannot even write one nested more than 255 levels deep)."""
    if isinstance(value, list | dict):
        return "(an array)" if isinstance(value, list) else "(an object)"
    return _cut(orjson.dumps(value).decode())


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_LENGTH else f"{text[: SHOWN_LENGTH - 4]}...{text[-1]}"


def read(body: bytes, model: type[ReviewT], expected: ExpectedKind) -> ReviewT | Decision:
    """The typed review, or the Decision that answers an unusable one."""
    data = load(body)
    if isinstance(data, Decision):
        return data
    return validate(data, model, expected)


def load(body: bytes) -> dict[str, Any] | Decision:
    """The parsed AdmissionReview with a usable envelope (a request with a uid), not yet typed.

    Split from ``validate`` so an endpoint can look at the raw request first and choose how much
    of the object to read (the pod webhook reads only the labels of pods it does not mutate).
    """
    if not body.strip():
        return rejected("request body is empty: expected an AdmissionReview")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as err:
        return rejected(f"request body is not valid JSON: {err}")
    if not isinstance(data, dict):
        return rejected("request body must be a JSON object (an AdmissionReview)")
    data.setdefault("apiVersion", DEFAULT_API_VERSION)
    data.setdefault("kind", admission.REVIEW_KIND)
    if data["apiVersion"] not in admission.SUPPORTED_API_VERSIONS:
        return rejected(
            f"unsupported AdmissionReview apiVersion {shown(data['apiVersion'])}: "
            f"expected one of {', '.join(admission.SUPPORTED_API_VERSIONS)}"
        )
    if data["kind"] != admission.REVIEW_KIND:
        return rejected(f"unsupported kind {shown(data['kind'])}: expected AdmissionReview")
    request = data.get("request")
    if not isinstance(request, dict):
        return rejected("AdmissionReview has no request")
    if not isinstance(request.get("uid"), str) or not request["uid"]:
        return rejected("AdmissionReview request has no uid")
    return data


def validate(data: dict[str, Any], model: type[ReviewT], expected: ExpectedKind) -> ReviewT | Decision:
    """``data`` from ``load`` read as ``model``, or the Decision that answers it when it cannot be."""
    request = data["request"]
    try:
        review = model.model_validate(data)
    except ValidationError as err:
        return _object_problem(data, err, expected)
    return kind_mismatch(review, request, expected) or review


def _object_problem(data: dict[str, Any], err: ValidationError, expected: ExpectedKind) -> Decision:
    """A review whose envelope reads but whose object does not: answer it (code 400) if we can."""
    try:
        envelope = Envelope.model_validate(data)
    except ValidationError as envelope_err:
        return rejected(f"AdmissionReview is malformed: {describe(envelope_err)}")
    mismatch = kind_mismatch(envelope, data["request"], expected)
    if mismatch:
        return mismatch
    first = err.errors(include_url=False)[0]
    field = first["loc"][1] if len(first["loc"]) > 1 else "object"
    return answer(
        envelope,
        admission.errored(400, f"cannot decode request.{field} as {expected}: {describe(err, skip=2)}"),
    )


def kind_mismatch(envelope: Envelope | AdmissionReview[Any], request: dict[str, Any], expected: ExpectedKind) -> Decision | None:
    """A review of another kind than the endpoint serves (a misrouted webhook), or whose object or
    old object says it is of another kind, is answered, not decided: controller-runtime's decoder
    refuses to decode one kind into another."""
    actual = envelope.request.kind if envelope.request.kind.kind and expected.mismatch(envelope.request.kind) else None
    actual = actual or _other_kind(request.get("object"), expected) or _other_kind(request.get("oldObject"), expected)
    if actual is None:
        return None
    return answer(envelope, admission.errored(400, f"unable to decode {_cut(str(actual))} into {expected}"))
