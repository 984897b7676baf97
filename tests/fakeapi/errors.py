"""API errors as the real API server words them, each carrying its ``Status`` body.

Code under test branches on ``status``, ``reason`` and sometimes the message
(``kubernetes.client.ApiException.status`` / ``.body``), so the bodies here copy
the real server's ``metav1.Status`` shapes and wording (k8s.io/apimachinery
``pkg/api/errors``): ``details.kind`` is the plural resource name, as there.
"""

from __future__ import annotations

from typing import Any

from .resources import ResourceType


class ApiError(Exception):
    """A failed API call; `status` is the ``metav1.Status`` body to send."""

    def __init__(self, code: int, reason: str, message: str,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    @property
    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": self.message, "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def _details(rt: ResourceType, name: str, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if rt.group:
        details["group"] = rt.group
    details["kind"] = rt.plural
    details.update(extra)
    return details


def not_found(rt: ResourceType, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{rt.qualified} "{name}" not found', _details(rt, name))


def already_exists(rt: ResourceType, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{rt.qualified} "{name}" already exists',
                    _details(rt, name))


def conflict(rt: ResourceType, name: str, why: str) -> ApiError:
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {rt.qualified} "{name}": {why}',
                    _details(rt, name))


MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"


def stale(rt: ResourceType, name: str) -> ApiError:
    """409 for an optimistic-concurrency failure (stale ``resourceVersion``)."""
    return conflict(rt, name, MODIFIED)


def invalid(rt: ResourceType, name: str, field: str, kind: str, detail: str,
            value: Any = None) -> ApiError:
    """422 Invalid with one cause, e.g. ``metadata.name: Required value: ...``."""
    shown = f"{kind}: {detail}" if value is None else f"{kind}: {value!r}: {detail}"
    message = f'{rt.kind}{"." + rt.group if rt.group else ""} "{name}" is invalid: {field}: {shown}'
    cause = {"reason": f"Field{kind.replace(' ', '')}", "message": shown, "field": field}
    return ApiError(422, "Invalid", message, _details(rt, name, kind=rt.kind, causes=[cause]))


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def unknown_resource() -> ApiError:
    """What the real server answers for a path no registered resource serves."""
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def method_not_allowed(message: str = "the server does not allow this method on the requested resource") -> ApiError:
    return ApiError(405, "MethodNotAllowed", message, {})


def unsupported_media_type(content_type: str, accepted: list[str]) -> ApiError:
    return ApiError(415, "UnsupportedMediaType",
                    f"the body of the request was in an unknown format - accepted media types include: "
                    f"{', '.join(accepted)}", {})


def expired(requested: int, oldest: int) -> ApiError:
    """The watch answer for a resourceVersion older than the kept history."""
    return ApiError(410, "Expired", f"too old resource version: {requested} ({oldest})")
