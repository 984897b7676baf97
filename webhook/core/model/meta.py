"""What every object model here shares: Go's field types, object metadata, keys and references.

Field types are as strict as Go's decoder but read ``null`` as the zero value, as Go does. Models
are frozen pydantic dataclasses with slots (a store holds thousands of PodCliqueSets), read by JSON
names alone: a member spelled the Python way is unknown to Kubernetes and to Grove."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Any, NamedTuple, TypeVar

from pydantic import BeforeValidator, ConfigDict, Field, PlainValidator, Strict, ValidationError
from pydantic.dataclasses import dataclass

T = TypeVar("T")

DEFAULT_NAMESPACE = "default"
"""Where an object that names no namespace goes, as ``kubectl`` puts it."""
GROVE_API_VERSION = "grove.io/v1alpha1"

MODEL = ConfigDict(extra="ignore")
"""Every model's: unknown members ignored; its field types are strict, so the class need not be."""


def _null_to(zero: Callable[[], Any]) -> BeforeValidator:
    return BeforeValidator(lambda value: zero() if value is None else value)


GoStr = Annotated[str, _null_to(str), Strict()]
GoList = Annotated[list[T], _null_to(list), Strict()]
"""A list whose ``null`` and absence read as empty: every list but the few whose nil Go prints."""
GoStrList = GoList[GoStr]
GoStrMap = Annotated[dict[str, GoStr], _null_to(dict), Strict()]
NilList = Annotated[list[T], Strict()] | None
"""A list Go may hold as nil: ``json.Marshal`` prints ``null``, ``DeepEqual`` takes it as empty."""
Int32 = Annotated[int, Strict(), Field(ge=-(2**31), le=2**31 - 1)]


def omitted_when_empty(**field: Any) -> Any:
    """A field tagged ``omitempty`` (``gotypes.of_model`` reads it): left out when "", empty or nil."""
    return Field(exclude_if=lambda value: not value, **field)


def first_problem(err: ValidationError) -> str:
    """The first problem pydantic found, as ``path: problem`` (paths by the JSON names)."""
    first = err.errors(include_url=False)[0]
    where = ""
    for part in first["loc"]:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    return f"{where}: {first['msg']}" if where else str(first["msg"])


class ObjectKey(NamedTuple):
    """apimachinery's ``types.NamespacedName``: how stores, caches and queues find one object."""

    namespace: str
    name: str

    def __str__(self) -> str:
        """``<namespace>/<name>``, as Go prints a ``client.ObjectKey``."""
        return f"{self.namespace}/{self.name}"


class GroupVersionKind(NamedTuple):
    """apimachinery's ``schema.GroupVersionKind``."""

    group: str = ""
    version: str = ""
    kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        """As apimachinery's ``GroupVersionKind.String()``."""
        return f"{self.api_version}, Kind={self.kind}"


class OwnerReference(NamedTuple):
    """An ``ownerReferences`` entry: a tuple, so that the claim cache keeps one copy per owner."""

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
        """Same group, kind and name: as in controller-runtime, a re-created owner is the same."""
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


@dataclass(frozen=True, slots=True, config=MODEL)
class ObjectMeta:
    name: GoStr = ""
    generate_name: GoStr = Field(default="", alias="generateName")
    namespace: GoStr = ""
    uid: GoStr = ""
    resource_version: GoStr = Field(default="", alias="resourceVersion")
    labels: GoStrMap = Field(default_factory=dict)
    owner_references: Annotated[list[OwnerReference], PlainValidator(read_owner_references)] = Field(
        default_factory=list, alias="ownerReferences"
    )
    deletion_timestamp: Annotated[str, Strict()] | None = Field(default=None, alias="deletionTimestamp")
