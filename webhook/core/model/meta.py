"""Object metadata and the Go-like field types every model here shares.

Go decodes JSON ``null`` into a field's zero value, and the API server may send ``null`` for empty
strings and lists, so these types accept ``null`` as "" or []. Everything else is strict: a number
where Go expects a string (or the reverse) is a decode error, as it is for Grove.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, NamedTuple, TypeVar

import msgspec
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainValidator

T = TypeVar("T")

DEFAULT_NAMESPACE = "default"
"""Where an object that names no namespace goes, as ``kubectl`` puts it."""


def _none_to_empty_str(value: Any) -> Any:
    return "" if value is None else value


def _none_to_empty_list(value: Any) -> Any:
    return [] if value is None else value


def _none_to_empty_dict(value: Any) -> Any:
    return {} if value is None else value


class Unusual(Exception):
    """A member a direct reading of parsed JSON does not take as it is (``null``, another type):
    the pydantic schema reads the object instead, and its first complaint is Go's refusal."""


class DecodeWhole(Exception):
    """A body decoded by the shape a webhook declares (``admission.envelope``) that its reading
    cannot finish as the body decoded whole would be read: a member handed over as its JSON text
    that orjson refuses (the whole body is then refused with orjson's message), or a PodCliqueSet
    whose spec was decoded by its declarations while the rest of the object is unusual (the schema
    then reads the whole object, for its message). The body is decoded whole and answered again."""


GoStr = Annotated[str, BeforeValidator(_none_to_empty_str)]
GoList = Annotated[list[T], BeforeValidator(_none_to_empty_list)]
GoStrList = GoList[GoStr]
GoStrMap = Annotated[dict[str, GoStr], BeforeValidator(_none_to_empty_dict)]
INT32 = range(-(2**31), 2**31)
"""Go's ``int32``: the values each reading of a member of that type takes."""
Int32 = Annotated[int, Field(ge=INT32.start, le=INT32.stop - 1)]


class KubeModel(BaseModel):
    """Base for read models: strict types, camelCase names, unknown fields ignored (never rewritten).

    Only the camelCase name reads a field: a member spelled the Python way (``init_containers``) is
    unknown to Kubernetes and to Grove, and reading it as the field would make the pod webhook patch
    a list the pod does not have."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


GROVE_API_VERSION = "grove.io/v1alpha1"


class ObjectKey(NamedTuple):
    """An object's namespace and name (apimachinery's ``types.NamespacedName``): how stores, caches
    and queues find one object."""

    namespace: str
    name: str

    def __str__(self) -> str:
        """``<namespace>/<name>``, as Go prints a ``client.ObjectKey``."""
        return f"{self.namespace}/{self.name}"


class GroupVersionKind(msgspec.Struct, frozen=True, gc=False):
    """apimachinery's ``schema.GroupVersionKind``: what a request or an object says it is, and the
    one kind an endpoint serves."""

    group: str = ""
    version: str = ""
    kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        """Rendered as apimachinery's ``GroupVersionKind.String()``: ``group/version, Kind=kind``."""
        return f"{self.api_version}, Kind={self.kind}"


class OwnerReference(NamedTuple):
    """An entry of ``metadata.ownerReferences``: the one shape the models, the claim cache and the
    claims written share (a tuple, so the claim cache can keep one copy per owner)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None

    @classmethod
    def controlling(cls, kind: str, name: str, uid: str) -> OwnerReference:
        """The controller reference Grove sets on what an object owns (``SetControllerReference``)."""
        return cls(GROVE_API_VERSION, kind, name, uid, True, True)

    @classmethod
    def from_api(cls, value: Any) -> OwnerReference:
        """One ``ownerReferences`` entry as the API sends it; ``ValueError`` when it is not one."""
        if not isinstance(value, dict):
            raise ValueError("an owner reference must be an object")
        api_version, kind, name, uid = (value.get(k) or "" for k in ("apiVersion", "kind", "name", "uid"))
        controller, block = value.get("controller"), value.get("blockOwnerDeletion")
        if not all(isinstance(t, str) for t in (api_version, kind, name, uid)):
            raise ValueError("owner reference apiVersion, kind, name and uid must be strings")
        if not all(f is None or isinstance(f, bool) for f in (controller, block)):
            raise ValueError("owner reference controller and blockOwnerDeletion must be booleans")
        return cls(api_version, kind, name, uid, controller, block)

    def to_api(self) -> dict[str, Any]:
        result: dict[str, Any] = {"apiVersion": self.api_version, "kind": self.kind, "name": self.name, "uid": self.uid}
        if self.controller is not None:
            result["controller"] = self.controller
        if self.block_owner_deletion is not None:
            result["blockOwnerDeletion"] = self.block_owner_deletion
        return result

    def same_object(self, other: OwnerReference) -> bool:
        """Same group, kind and name: the UID is not compared, as in controller-runtime, so a
        re-created owner is the same object."""
        return (
            self.api_version.rpartition("/")[0] == other.api_version.rpartition("/")[0]
            and self.kind == other.kind
            and self.name == other.name
        )


def controller_of(references: Iterable[OwnerReference]) -> OwnerReference | None:
    return next((r for r in references if r.controller is True), None)


def read_owner_references(value: Any) -> list[OwnerReference]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("ownerReferences must be a list")
    return [OwnerReference.from_api(v) for v in value]


class ObjectMeta(KubeModel):
    name: GoStr = ""
    generate_name: GoStr = Field("", alias="generateName")
    namespace: GoStr = ""
    uid: GoStr = ""
    resource_version: GoStr = Field("", alias="resourceVersion")
    labels: GoStrMap = Field(default_factory=dict)
    owner_references: Annotated[list[OwnerReference], PlainValidator(read_owner_references)] = Field(
        default_factory=list, alias="ownerReferences"
    )
    deletion_timestamp: str | None = Field(None, alias="deletionTimestamp")
