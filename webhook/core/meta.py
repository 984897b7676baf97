"""Object metadata and the Go-like field types every model here shares.

Go decodes JSON ``null`` into a field's zero value, and the API server may send ``null`` for empty
strings and lists, so these types accept ``null`` as "" or []. Everything else is strict: a number
where Go expects a string (or the reverse) is a decode error, as it is for Grove.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

T = TypeVar("T")

DEFAULT_NAMESPACE = "default"
"""Where an object that names no namespace goes, as ``kubectl`` puts it."""


def _none_to_empty_str(value: Any) -> Any:
    return "" if value is None else value


def _none_to_empty_list(value: Any) -> Any:
    return [] if value is None else value


def _none_to_empty_dict(value: Any) -> Any:
    return {} if value is None else value


GoStr = Annotated[str, BeforeValidator(_none_to_empty_str)]
GoList = Annotated[list[T], BeforeValidator(_none_to_empty_list)]
GoStrList = GoList[GoStr]
GoStrMap = Annotated[dict[str, GoStr], BeforeValidator(_none_to_empty_dict)]
Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]


class KubeModel(BaseModel):
    """Base for read models: strict types, camelCase names, unknown fields ignored (never rewritten).

    Only the camelCase name reads a field: a member spelled the Python way (``init_containers``) is
    unknown to Kubernetes and to Grove, and reading it as the field would make the pod webhook patch
    a list the pod does not have."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class OwnerReference(KubeModel):
    api_version: GoStr = Field("", alias="apiVersion")
    kind: GoStr = ""
    name: GoStr = ""
    uid: GoStr = ""
    controller: bool | None = None


class ObjectMeta(KubeModel):
    name: GoStr = ""
    generate_name: GoStr = Field("", alias="generateName")
    namespace: GoStr = ""
    uid: GoStr = ""
    resource_version: GoStr = Field("", alias="resourceVersion")
    labels: GoStrMap = Field(default_factory=dict)
    owner_references: GoList[OwnerReference] = Field(
        default_factory=list, alias="ownerReferences"
    )
    deletion_timestamp: str | None = Field(None, alias="deletionTimestamp")
