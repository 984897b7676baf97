"""An AdmissionReview body decoded once into a typed request (controller-runtime's ``http.go``).

Both webhooks read their body the same way: JSON, an AdmissionReview of a supported version, a
request with a uid. Problems with the envelope are the caller's fault and get HTTP 400 with
``{"error": ...}`` (``Rejection``); everything after that is answered with an AdmissionReview. The
request keeps its objects as decoded (whole, or in the shape the webhook declares, ``envelope``):
each webhook reads them as its kind (``read_objects``), as much of them as it needs (the pod
webhook reads only the labels of pods it does not mutate).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec
import orjson
from pydantic import Field, ValidationError

from webhook.core.admission import envelope, response
from webhook.core.admission.envelope import Envelope
from webhook.core.admission.response import AdmissionResponse
from webhook.core.model.meta import GoStr, GroupVersionKind, KubeModel

DEFAULT_API_VERSION = "admission.k8s.io/v1"
SUPPORTED_API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
REVIEW_KIND = "AdmissionReview"
NO_CONTENT = "there is no content to decode"

T = TypeVar("T")


class AdmissionRequest(msgspec.Struct, frozen=True):
    """The request of a review; its objects are kept as sent (``read_objects`` reads them). A frozen
    msgspec struct, as every value made on every request: the cheapest immutable object to make."""

    uid: str
    kind: GroupVersionKind = GroupVersionKind()
    name: str = ""
    namespace: str = ""
    operation: str = ""
    dry_run: bool | None = None
    object: Any = None
    old_object: Any = None
    user_info: Any = None
    """``userInfo`` as sent, read only by the checks that need the user (``pcs.authorization.User.read``)."""
    resource: str = ""
    """``resource.resource``: the plural of the resource written (``podcliques``), which a review
    of a subresource needs, its object being of another kind (a ``Scale``)."""
    sub_resource: str = ""
    """``subResource``, e.g. ``scale``; empty for the resource itself."""
    typed: bool = False
    """The objects were decoded into the shape the handler declares (``envelope``): every member it
    declares is of the declared type."""


class AdmissionReview(msgspec.Struct, frozen=True):
    api_version: str
    request: AdmissionRequest


class _KindSchema(KubeModel):
    """``request.kind`` as pydantic checks it, for the messages of an unusual review."""

    group: GoStr = ""
    version: GoStr = ""
    kind: GoStr = ""


class _GroupVersionResourceModel(KubeModel):
    group: GoStr = ""
    version: GoStr = ""
    resource: GoStr = ""


class _RequestModel(KubeModel):
    uid: str
    kind: _KindSchema = Field(default_factory=_KindSchema)
    resource: _GroupVersionResourceModel = Field(default_factory=_GroupVersionResourceModel)
    sub_resource: GoStr = Field("", alias="subResource")
    name: GoStr = ""
    namespace: GoStr = ""
    operation: GoStr = ""
    dry_run: bool | None = Field(None, alias="dryRun")
    object: Any = None
    old_object: Any = Field(None, alias="oldObject")
    user_info: Any = Field(None, alias="userInfo")


class _ReviewModel(KubeModel):
    """What a usable review is, as pydantic checks it: read only when the common shape does not hold,
    for its exact error messages and its reading of ``null`` as empty."""

    api_version: GoStr = Field("", alias="apiVersion")
    kind: GoStr = ""
    request: _RequestModel


@dataclass(frozen=True, slots=True)
class Rejection:
    """A body that is no usable AdmissionReview: answered with an HTTP error, not a review."""

    status: int
    message: str


SHOWN_LENGTH = 80


def shown(value: Any) -> str:
    """A value from the body, as JSON, for an error message: arrays and objects by their type and
    long text cut short, so that the one-line error never echoes a large or deeply nested value
    (orjson cannot even write one nested more than 255 levels deep)."""
    if isinstance(value, list | dict):
        return "(an array)" if isinstance(value, list) else "(an object)"
    return shortened(orjson.dumps(value).decode())


def shortened(text: str) -> str:
    """``text`` cut to ``SHOWN_LENGTH`` characters for an error message, its last one kept."""
    return text if len(text) <= SHOWN_LENGTH else f"{text[: SHOWN_LENGTH - 4]}...{text[-1]}"


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def first_problem(err: ValidationError) -> str:
    """The first problem pydantic found, as ``path: problem`` (paths in the object's own terms)."""
    first = err.errors(include_url=False)[0]
    where = _location(tuple(first["loc"]))
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def decode(body: bytes, objects: Envelope | None = None) -> AdmissionReview | Rejection:
    """The review in ``body``, or why there is none to answer: decoded by ``objects`` (the shape a
    webhook reads, ``envelope``) when the body is the usual one, else whole."""
    if objects is not None:
        data = envelope.read(objects, body)
        review = None if data is None else _usual(data)
        if review is not None:
            return review
    return _whole(body)


def _usual(data: dict[str, Any]) -> AdmissionReview | None:
    """The review of a body decoded in the shape its webhook declares (``envelope``: every request
    member of its type already) when it is as the API server sends it, else None."""
    api_version, request = data.get("apiVersion", DEFAULT_API_VERSION), data.get("request")
    if api_version not in SUPPORTED_API_VERSIONS or data.get("kind", REVIEW_KIND) != REVIEW_KIND:
        return None
    if request is None or not request.get("uid"):
        return None
    user_info = request.get("userInfo")
    if user_info is not None:
        try:
            user_info = orjson.loads(memoryview(user_info))
        except orjson.JSONDecodeError:
            return None
    get, resource = request.get, request.get("resource")
    read = AdmissionRequest(
        request["uid"], get("kind", _NO_KIND), get("name", ""), get("namespace", ""), get("operation", ""),
        get("dryRun"), get("object"), get("oldObject"), user_info,
        "" if resource is None else resource.resource, get("subResource", ""), typed=True,
    )
    return AdmissionReview(api_version, read)


_NO_KIND = GroupVersionKind()


def _whole(body: bytes) -> AdmissionReview | Rejection:
    if not body.strip():
        return Rejection(400, "request body is empty: expected an AdmissionReview")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as err:
        return Rejection(400, f"request body is not valid JSON: {err}")
    if not isinstance(data, dict):
        return Rejection(400, "request body must be a JSON object (an AdmissionReview)")
    data.setdefault("apiVersion", DEFAULT_API_VERSION)
    data.setdefault("kind", REVIEW_KIND)
    if data["apiVersion"] not in SUPPORTED_API_VERSIONS:
        return Rejection(
            400,
            f"unsupported AdmissionReview apiVersion {shown(data['apiVersion'])}: "
            f"expected one of {', '.join(SUPPORTED_API_VERSIONS)}",
        )
    if data["kind"] != REVIEW_KIND:
        return Rejection(400, f"unsupported kind {shown(data['kind'])}: expected AdmissionReview")
    request = data.get("request")
    if not isinstance(request, dict):
        return Rejection(400, "AdmissionReview has no request")
    if not isinstance(request.get("uid"), str) or not request["uid"]:
        return Rejection(400, "AdmissionReview request has no uid")
    return _common_shape(data["apiVersion"], request) or _checked(data)


_ABSENT = object()


def _common_shape(api_version: str, request: dict[str, Any]) -> AdmissionReview | None:
    """The review of a body decoded whole, read directly when every member has the type it should
    (as the API server sends it): no pydantic model is built. None when anything is unusual."""
    name, namespace, operation = request.get("name", ""), request.get("namespace", ""), request.get("operation", "")
    dry_run = request.get("dryRun")
    if type(name) is not str or type(namespace) is not str or type(operation) is not str:
        return None
    if dry_run is not None and not isinstance(dry_run, bool):
        return None
    gvk = _plain_kind(request.get("kind", _ABSENT))
    if gvk is None:
        return None
    resource = _resource(request)
    if resource is None:
        return None
    read = AdmissionRequest(
        request["uid"],
        gvk,
        name,
        namespace,
        operation,
        dry_run,
        request.get("object"),
        request.get("oldObject"),
        request.get("userInfo"),
        *resource,
    )
    return AdmissionReview(api_version, read)


def _plain_kind(kind: Any) -> GroupVersionKind | None:
    if kind is _ABSENT:
        return GroupVersionKind()
    if not isinstance(kind, dict):
        return None
    group, version, kind_name = kind.get("group", ""), kind.get("version", ""), kind.get("kind", "")
    if type(group) is not str or type(version) is not str or type(kind_name) is not str:
        return None
    return GroupVersionKind(group, version, kind_name)


def _resource(request: dict[str, Any]) -> tuple[str, str] | None:
    """``resource.resource`` and ``subResource`` when both are text (or absent), else None."""
    resource, sub_resource = request.get("resource", {}), request.get("subResource", "")
    plural = resource.get("resource", "") if isinstance(resource, dict) else None
    if type(plural) is not str or type(sub_resource) is not str:
        return None
    return plural, sub_resource


def _checked(data: dict[str, Any]) -> AdmissionReview | Rejection:
    try:
        checked = _ReviewModel.model_validate(data)
    except ValidationError as err:
        return Rejection(400, f"AdmissionReview is malformed: {first_problem(err)}")
    request, gvk = checked.request, checked.request.kind
    return AdmissionReview(
        checked.api_version,
        AdmissionRequest(
            request.uid,
            GroupVersionKind(gvk.group, gvk.version, gvk.kind),
            request.name,
            request.namespace,
            request.operation,
            request.dry_run,
            request.object,
            request.old_object,
            request.user_info,
            request.resource.resource,
            request.sub_resource,
        ),
    )


def read_objects(
    request: AdmissionRequest, read: Callable[[Any], T], expected: GroupVersionKind, read_old: Callable[[Any], T] | None = None
) -> tuple[T | None, T | None] | AdmissionResponse:
    """``object`` and ``oldObject`` as ``read`` gives them (``oldObject`` as ``read_old`` does, when
    given), None where absent, or the answer (code 400) to a review whose objects Go's decoder
    would refuse (the reader raised ``ValidationError``)."""
    try:
        obj = None if request.object is None else read(request.object)
    except ValidationError as err:
        return _undecodable("object", expected, err)
    try:
        old = None if request.old_object is None else (read_old or read)(request.old_object)
    except ValidationError as err:
        return _undecodable("oldObject", expected, err)
    return obj, old


def _undecodable(field: str, expected: GroupVersionKind, err: ValidationError) -> AdmissionResponse:
    return response.errored(400, f"cannot decode request.{field} as {expected}: {first_problem(err)}")
