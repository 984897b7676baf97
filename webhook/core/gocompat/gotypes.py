"""Go types as data, because three things users see come from them, not from the JSON sent:
decoding refuses a value of the wrong JSON type (HTTP 400), ``Semantic.DeepEqual`` decides whether
an UPDATE changed a list (nil equals empty, pointers compare what they point to, quantities by
value), and ``json.Marshal`` prints it in the immutability message (declaration order,
``omitempty``, ``null`` for nil). A decoded value is plain Python: a struct a dict of every field
(or a model instance, for Grove's types, read off the model by ``of_model``), nil None."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from operator import itemgetter
from types import NoneType, UnionType
from typing import TYPE_CHECKING, Annotated, Any

import orjson
from pydantic.fields import FieldInfo
from pydantic_core import CoreSchema, SchemaValidator, ValidationError, core_schema

from webhook.core.gocompat import gojson, quantity
from webhook.core.gocompat.fielderrors import Path
from webhook.core.gocompat.gojson import GoMap
from webhook.core.gocompat.rawjson import RawJSON


class DecodeError(ValueError):
    """A value Go's decoder refuses, its path collected on the way up: a valid one builds none."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.parts: list[str | int] = []

    def within(self, part: str | int) -> DecodeError:
        self.parts.append(part)
        return self

    def at(self, path: Path) -> str:
        """``<path>: <problem>``, ``path`` being where decoding started."""
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


class GoType:

    if TYPE_CHECKING:
        # A field, a constant or a property by type: declared for the checker alone.
        @property
        def go_name(self) -> str: ...

    def decode(self, value: Any) -> Any:
        raise NotImplementedError

    def key(self, value: Any) -> Any:
        """A Python value equal for two Go values exactly when ``Semantic.DeepEqual`` holds."""
        return value

    def marshal(self, value: Any) -> Any:
        """A value ``gojson.marshal`` prints as ``json.Marshal`` prints the Go value."""
        return value

    def is_empty(self, value: Any) -> bool:
        """``omitempty``: false, 0, "", nil and empty slices and maps (never a struct)."""
        return False

    def mismatch(self, value: Any) -> DecodeError:
        return DecodeError(f"cannot unmarshal {_json_kind(value)} into a Go value of type {self.go_name}")

    def accepting(self) -> CoreSchema:
        """A schema taking only what ``decode`` takes, so that templates are checked in Rust and
        only what it refuses is decoded here, to say why; ``null`` alone where it cannot tell."""
        return core_schema.none_schema()


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

    def is_empty(self, value: Any) -> bool:
        return bool(value == self.zero)

    def accepting(self) -> CoreSchema:
        if self.kind is str:
            return core_schema.nullable_schema(core_schema.str_schema(strict=True))
        if self.kind is bool:
            return core_schema.nullable_schema(core_schema.bool_schema(strict=True))
        bound = 2 ** (self.bits - 1)
        return core_schema.nullable_schema(core_schema.int_schema(strict=True, ge=-bound, lt=bound))


STRING = Scalar("string", str, "")
INT32 = Scalar("int32", int, 0, 32)
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

    def accepting(self) -> CoreSchema:
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

    def accepting(self) -> CoreSchema:
        return core_schema.nullable_schema(core_schema.list_schema(self.item.accepting(), strict=True))

    def key(self, value: Any) -> Any:
        return tuple(self.item.key(v) for v in value or ())

    def marshal(self, value: Any) -> Any:
        return None if value is None else [self.item.marshal(v) for v in value]

    def is_empty(self, value: Any) -> bool:
        return not value


@dataclass(frozen=True)
class Map(GoType):
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

    def accepting(self) -> CoreSchema:
        return core_schema.nullable_schema(core_schema.dict_schema(core_schema.str_schema(), self.value.accepting(), strict=True))

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
    attr: str = ""
    """The attribute holding it in a model instance (``of_model``)."""


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
        if value is None or value == {}:
            return self.zero
        if not isinstance(value, dict):
            raise self.mismatch(value)
        decoded = {}
        for f in self.fields:
            try:
                decoded[f.name] = f.type.decode(value.get(f.name))
            except DecodeError as err:
                raise err.within(f.name) from None
        return decoded

    def accepting(self) -> CoreSchema:
        """Members not declared are ignored, as ``decode`` ignores them; one not sent is null."""
        fields = {f.name: core_schema.typed_dict_field(f.type.accepting(), required=False) for f in self.fields}
        return core_schema.nullable_schema(core_schema.typed_dict_schema(fields, extra_behavior="ignore", strict=True))

    @staticmethod
    def get(value: Any, field: Field) -> Any:
        return value[field.name] if isinstance(value, dict) else getattr(value, field.attr)

    def key(self, value: Any) -> Any:
        return tuple(f.type.key(self.get(value, f)) for f in self.fields)

    def marshal(self, value: Any) -> Any:
        out: dict[str, Any] = {}
        for f in self.fields:
            v = self.get(value, f)
            if (f.omitempty and f.type.is_empty(v)) or (f.omitzero and v is None):  # zero time: None
                continue
            out[f.name] = f.type.marshal(v)
        return out


def of_model(model: type, package: str = "v1alpha1", **types: GoType) -> Struct:
    """The Go struct a model declares; ``types`` names those of fields kept as sent."""
    hints = typing.get_type_hints(model, include_extras=True)
    fields = []
    for f in dataclasses.fields(model):
        info = f.default if isinstance(f.default, FieldInfo) else None
        name = info.alias if info is not None and info.alias else f.name
        go_type = types.get(name) or _go_type(hints[f.name], package)
        fields.append(Field(name, go_type, omitempty=info is not None and info.exclude_if is not None, attr=f.name))
    return Struct(f"{package}.{model.__name__}", tuple(fields))


def _go_type(hint: Any, package: str) -> GoType:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        return _go_type(args[0], package)
    if origin in (UnionType, typing.Union):
        inner = _go_type(next(a for a in args if a is not NoneType), package)
        return inner if isinstance(inner, Slice | Map) else Ptr(inner)
    if origin is list:
        return Slice(_go_type(args[0], package))
    if origin is dict:
        return Map(_go_type(args[1], package))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return of_model(hint, package)
    scalars: dict[Any, GoType] = {str: STRING, int: INT32, bool: BOOL}
    return scalars[hint]


def decodes(go_type: GoType) -> Callable[[Any], bool]:
    """Whether Go's decoder takes a value: told in Rust where it can be, else by decoding it."""
    validator = SchemaValidator(go_type.accepting())

    def check(value: Any) -> bool:
        try:
            validator.validate_python(value)
        except ValidationError:
            try:
                go_type.decode(value)
            except DecodeError:
                return False
        return True

    return check


def semantic_equal(go_type: GoType, a: Any, b: Any) -> bool:
    """apimachinery's ``equality.Semantic.DeepEqual`` on two decoded values of ``go_type``."""
    return bool(go_type.key(a) == go_type.key(b))


# apimachinery's own types inside the DRA structs

INVALID_QUANTITY = "invalid quantity"
"""What a quantity that does not parse is refused with, before the quoted text."""
MAX_RAW_DEPTH = 100
"""How deep an opaque value may nest: Go reads 10,000 levels, but orjson writes at most 255 and
printing recurses; no device configuration comes near 100, and one beyond is refused (code 400)."""
TOO_DEEP = f"nested more than {MAX_RAW_DEPTH} levels deep"


class _Quantity(GoType):
    """A string (or number) in JSON, compared by value, printed canonically."""

    go_name = "resource.Quantity"

    def decode(self, value: Any) -> Any:
        if value is None:
            return quantity.ZERO
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.mismatch(value)
        parsed = quantity.parse(value if isinstance(value, str) else gojson.marshal(value))
        if parsed is None:
            raise DecodeError(f"{INVALID_QUANTITY} {gojson.quote(str(value))}")
        return parsed

    def key(self, value: Any) -> Any:
        return value.value

    def marshal(self, value: Any) -> Any:
        return value.text


def deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit``: found level by level, as recursion would fail
    on the very values it is there to refuse."""
    level = [value]
    for _ in range(limit):
        level = [
            child for v in level if isinstance(v, list | tuple | dict) for child in (v.values() if isinstance(v, dict) else v)
        ]
        if not level:
            return False
    return any(isinstance(v, list | tuple | dict) for v in level)


class _Raw(GoType):
    """Any JSON, kept as sent: Go compares and prints the bytes as they came (``RawJSON``, where
    the caller found them; else the value, written as orjson writes it)."""

    go_name = "runtime.RawExtension"

    def decode(self, value: Any) -> Any:
        if deeper_than(value.value if isinstance(value, RawJSON) else value, MAX_RAW_DEPTH):
            raise DecodeError(TOO_DEEP)
        return value

    def key(self, value: Any) -> Any:
        if isinstance(value, RawJSON):
            return value.text
        return b"" if value is None else orjson.dumps(value)


class _Time(GoType):
    """RFC 3339, compared as instants, printed in UTC to the second; the zero time ``null``."""

    go_name = "v1.Time"

    def decode(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.mismatch(value)
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None or "T" not in value.upper():
            raise DecodeError(f"invalid RFC 3339 time {gojson.quote(value)}")
        return parsed

    def marshal(self, value: Any) -> Any:
        if value is None:
            return None
        t = value.astimezone(UTC)
        return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"


QUANTITY = _Quantity()
RAW = _Raw()
TIME = _Time()
