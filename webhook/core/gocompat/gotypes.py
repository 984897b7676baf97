"""Go types described as data, for values that must be decoded, compared and printed as Go does.

Grove holds ``resourceClaimTemplates[].templateSpec`` as a typed ``resource.k8s.io/v1`` struct. Three
things about it are visible to users and come from the Go types, not from the JSON that was sent:
decoding rejects a value of the wrong JSON type (HTTP 400), ``Semantic.DeepEqual`` decides whether an
UPDATE changed it (nil equals empty, pointers compare what they point to, quantities compare by
value), and ``json.Marshal`` prints it in the immutability message (declaration order, ``omitempty``,
``null`` for nil). Each type below does those three things; ``dra`` describes the structs.

A decoded value is plain Python: a struct is a dict holding every field, nil is None.

Whether a value decodes at all is asked of every template a review carries, and the usual answer is
yes: each type also gives a msgspec type (``accepting``) that takes only values ``decode`` takes, so
that msgspec checks the usual value in C and only what it refuses is decoded here, to say why.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from operator import itemgetter
from types import GenericAlias
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from webhook.core.gocompat.fielderrors import Path
from webhook.core.gocompat.gojson import GoMap


class DecodeError(ValueError):
    """A JSON value Go's decoder refuses. The field path is collected while the error travels up
    (``within``), so decoding a valid value builds no paths at all."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.parts: list[str | int] = []

    def within(self, part: str | int) -> DecodeError:
        self.parts.append(part)
        return self

    def at(self, path: Path) -> str:
        """``<path>: <problem>``, the path given for where decoding started."""
        for part in reversed(self.parts):
            path = path.index(part) if isinstance(part, int) else path.child(part)
        return f"{path}: {self.problem}"


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


_NO_VALUE = Annotated[str, msgspec.Meta(pattern="(?!)")]
"""A msgspec type no value has (a string matching no pattern)."""


class GoType:
    """One Go type: how JSON decodes into it, what ``Semantic.DeepEqual`` compares, what
    ``json.Marshal`` prints."""

    if TYPE_CHECKING:
        # Read-only: a field of some types, a constant of others, derived from the element type of
        # the rest. Declared for the checker only, so that dataclass fields can still fill it in.
        @property
        def go_name(self) -> str: ...

    def decode(self, value: Any) -> Any:
        raise NotImplementedError

    def accepting(self) -> Any:
        """A msgspec type whose values, and ``null``, ``decode`` takes (``msgspec.convert``
        with it refuses some values ``decode`` takes too: those are then decoded to find out).
        Here only ``null``: a type whose check msgspec cannot make leaves every value to ``decode``."""
        return _NO_VALUE | None

    def key(self, value: Any) -> Any:
        """A Python value equal for two Go values exactly when ``Semantic.DeepEqual`` holds."""
        return value

    def marshal(self, value: Any) -> Any:
        """A value ``gojson.marshal`` prints as ``json.Marshal`` prints the Go value."""
        return value

    def is_empty(self, value: Any) -> bool:
        """``omitempty``: false, 0, "", nil and empty slices and maps (never a struct)."""
        return False

    def is_zero(self, value: Any) -> bool:
        """``omitzero``, for the one type it is used with here (a nil pointer or the zero time)."""
        return value is None

    def mismatch(self, value: Any) -> DecodeError:
        return DecodeError(f"cannot unmarshal {_json_kind(value)} into a Go value of type {self.go_name}")


@dataclass(frozen=True)
class Scalar(GoType):
    go_name: str
    kind: type
    zero: Any
    bits: int = 0

    def decode(self, value: Any) -> Any:
        if value is None:
            return self.zero
        if type(value) is not self.kind:
            raise self.mismatch(value)
        if self.bits and not -(2 ** (self.bits - 1)) <= value < 2 ** (self.bits - 1):
            raise DecodeError(f"cannot unmarshal number {value} into a Go value of type {self.go_name}")
        return value

    def accepting(self) -> Any:
        if not self.bits:
            return self.kind | None
        return Annotated[int, msgspec.Meta(ge=-(2 ** (self.bits - 1)), le=2 ** (self.bits - 1) - 1)] | None

    def is_empty(self, value: Any) -> bool:
        return bool(value == self.zero)


STRING = Scalar("string", str, "")
INT64 = Scalar("int64", int, 0, 64)
BOOL = Scalar("bool", bool, False)


@dataclass(frozen=True)
class Ptr(GoType):
    to: GoType

    @property
    def go_name(self) -> str:
        return f"*{self.to.go_name}"

    def decode(self, value: Any) -> Any:
        return None if value is None else self.to.decode(value)

    def accepting(self) -> Any:
        return self.to.accepting()

    def key(self, value: Any) -> Any:
        return None if value is None else (self.to.key(value),)

    def marshal(self, value: Any) -> Any:
        return None if value is None else self.to.marshal(value)

    def is_empty(self, value: Any) -> bool:
        return value is None


@dataclass(frozen=True)
class Slice(GoType):
    item: GoType

    @property
    def go_name(self) -> str:
        return f"[]{self.item.go_name}"

    def decode(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.mismatch(value)
        decoded = []
        for i, v in enumerate(value):
            try:
                decoded.append(self.item.decode(v))
            except DecodeError as err:
                raise err.within(i) from None
        return decoded

    def accepting(self) -> Any:
        return GenericAlias(list, (self.item.accepting(),)) | None

    def key(self, value: Any) -> Any:
        return tuple(self.item.key(v) for v in value or ())

    def marshal(self, value: Any) -> Any:
        return None if value is None else [self.item.marshal(v) for v in value]

    def is_empty(self, value: Any) -> bool:
        return not value


@dataclass(frozen=True)
class Map(GoType):
    """A ``map[string]V``: ``json.Marshal`` sorts its keys."""

    value: GoType

    @property
    def go_name(self) -> str:
        return f"map[string]{self.value.go_name}"

    def decode(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.mismatch(value)
        decoded = {}
        for k, v in value.items():
            try:
                decoded[k] = self.value.decode(v)
            except DecodeError as err:
                raise err.within(k) from None
        return decoded

    def accepting(self) -> Any:
        return GenericAlias(dict, (str, self.value.accepting())) | None

    def key(self, value: Any) -> Any:
        return tuple(sorted(((k, self.value.key(v)) for k, v in (value or {}).items()), key=itemgetter(0)))

    def marshal(self, value: Any) -> Any:
        return None if value is None else GoMap({k: self.value.marshal(v) for k, v in value.items()})

    def is_empty(self, value: Any) -> bool:
        return not value


@dataclass(frozen=True)
class Field:
    name: str
    type: GoType
    omitempty: bool = False
    omitzero: bool = False


@dataclass(frozen=True)
class Struct(GoType):
    go_name: str
    fields: tuple[Field, ...]

    @cached_property
    def by_name(self) -> dict[str, GoType]:
        return {f.name: f.type for f in self.fields}

    @cached_property
    def zero(self) -> dict[str, Any]:
        """The zero struct, shared by every absent one (decoded values are never modified)."""
        return {f.name: f.type.decode(None) for f in self.fields}

    def decode(self, value: Any) -> Any:
        if not value:
            if value is None or isinstance(value, dict):
                return self.zero
            raise self.mismatch(value)
        if not isinstance(value, dict):
            raise self.mismatch(value)
        given = value
        decoded = {}
        for f in self.fields:
            try:
                decoded[f.name] = f.type.decode(given.get(f.name))
            except DecodeError as err:
                raise err.within(f.name) from None
        return decoded

    def accepting(self) -> Any:
        """Members not declared are ignored, as ``decode`` ignores them; one not sent is null."""
        return self._accepting | None

    @cached_property
    def _accepting(self) -> type[msgspec.Struct]:
        return msgspec.defstruct(self.go_name, [(f.name, f.type.accepting(), None) for f in self.fields], gc=False)

    def key(self, value: Any) -> Any:
        return tuple(f.type.key(value[f.name]) for f in self.fields)

    def marshal(self, value: Any) -> Any:
        out: dict[str, Any] = {}
        for f in self.fields:
            v = value[f.name]
            if (f.omitempty and f.type.is_empty(v)) or (f.omitzero and f.type.is_zero(v)):
                continue
            out[f.name] = f.type.marshal(v)
        return out


def semantic_equal(go_type: GoType, a: Any, b: Any) -> bool:
    """apimachinery's ``equality.Semantic.DeepEqual`` on two decoded values of ``go_type``."""
    return bool(go_type.key(a) == go_type.key(b))
