"""CEL that treats a JSON value as the webhook's Go types do (``gocompat.gotypes``), generated from
the same type descriptions, so the policy decodes, compares and prints what the webhook does.

``equal`` is ``Semantic.DeepEqual`` (a missing field is its zero value, nil equals empty, a pointer
is compared by what it points to, a quantity by value), ``marshal`` is ``json.Marshal`` for the
types CEL can print (strings, and the slices, pointers and structs made of them), and ``problems``
is where Go's decoder would refuse the value: once the API server has checked Grove's CRD schema,
a quantity that does not parse. Opaque parameters are read to any depth, as Go reads them: the
webhook's own limit (100 levels, ``gotypes.MAX_RAW_DEPTH``) would take a hundred nested
comprehensions, which the API server needs seconds to compile whenever it starts, while every
admission waits (docs/policy.md). Nested comprehensions are given variable names by depth (``i0``,
``x1``) so that an inner one never hides an outer one's.
"""

from __future__ import annotations

from webhook.core.gocompat.gotypes import BOOL, INT32, INT64, INVALID_QUANTITY, QUANTITY, RAW, STRING, Field, GoType, Map, Ptr, Slice, Struct
from webhook.policy import cel
from webhook.policy.cel import Text

ZEROS: dict[GoType, str] = {STRING: "''", INT64: "0", BOOL: "false", QUANTITY: "'0'", RAW: "null"}


def field(value: str, f: Field) -> str:
    """The field's value as Go decodes it into a non-pointer: its zero value when it is missing."""
    zero = ZEROS.get(f.type)
    if zero is None:
        zero = "[]" if isinstance(f.type, Slice) else "{}"
    return f"{value}.?{f.name}.orValue({zero})"


def equal(go_type: GoType, a: str, b: str, depth: int = 0) -> str:
    """Whether two present values of ``go_type`` are ``Semantic.DeepEqual``."""
    if isinstance(go_type, Struct):
        return " && ".join(_equal_field(f, a, b, depth) for f in go_type.fields)
    if isinstance(go_type, Slice):
        i, x = f"i{depth}", f"x{depth}"
        inner = equal(go_type.item, x, f"{b}[{i}]", depth + 1)
        return f"(size({a}) == size({b}) && {a}.all({i}, {x}, {inner}))"
    if isinstance(go_type, Map):
        k = f"k{depth}"
        inner = equal(go_type.value, f"{a}[{k}]", f"{b}[{k}]", depth + 1)
        return f"(size({a}) == size({b}) && {a}.all({k}, {k} in {b} && {inner}))"
    if go_type is QUANTITY:
        return f"quantity(string({a})).compareTo(quantity(string({b}))) == 0"
    if go_type in (STRING, INT64, BOOL, RAW):
        return f"{a} == {b}"
    raise TypeError(f"no CEL comparison for {go_type.go_name}")


def _equal_field(f: Field, a: str, b: str, depth: int) -> str:
    if isinstance(f.type, Ptr):
        present = f"{a}.?{f.name}.hasValue()"
        pointee = equal(f.type.to, f"{a}.{f.name}", f"{b}.{f.name}", depth)
        return f"({present} == {b}.?{f.name}.hasValue() && (!{present} || {pointee}))"
    return equal(f.type, field(a, f), field(b, f), depth)


def marshal(go_type: GoType, value: str, depth: int = 0) -> str:
    """The text ``json.Marshal`` prints for a present value of ``go_type`` (strings quoted by
    ``strings.quote``, which writes ``<``, ``>``, ``&`` and control characters other than line
    breaks as they are, where Go escapes them)."""
    if isinstance(go_type, Struct):
        parts = [_marshal_field(f, value, depth) for f in go_type.fields]
        return str(Text.of("{") + Text.expr(f"({' + '.join(parts)}).join(',')") + "}")
    if isinstance(go_type, Slice):
        x = f"x{depth}"
        return str(Text.of("[") + Text.expr(f"{value}.map({x}, {marshal(go_type.item, x, depth + 1)}).join(',')") + "]")
    if go_type is STRING:
        return cel.quote(value)
    raise TypeError(f"no CEL text for {go_type.go_name}")


def _marshal_field(f: Field, value: str, depth: int) -> str:
    """The field as a list of one ``"name":value`` text, or of none when ``omitempty`` leaves it out."""
    if isinstance(f.type, Ptr):
        text = Text.of(f'"{f.name}":') + Text.expr(marshal(f.type.to, f"{value}.{f.name}", depth))
        return cel.when(f"has({value}.{f.name})", f"[{text}]")
    member = field(value, f)
    text = Text.of(f'"{f.name}":') + Text.expr(marshal(f.type, member, depth))
    if not f.omitempty:
        return f"[{text}]"
    empty = f"{member} == ''" if f.type is STRING else f"size({member}) == 0"
    return cel.when(f"!({empty})", f"[{text}]")


def can_fail(go_type: GoType) -> bool:
    """Whether decoding a value of ``go_type`` that the CRD schema accepted can still fail."""
    if go_type is QUANTITY:
        return True
    if isinstance(go_type, Struct):
        return any(can_fail(f.type) for f in go_type.fields)
    if isinstance(go_type, Ptr):
        return can_fail(go_type.to)
    if isinstance(go_type, Slice):
        return can_fail(go_type.item)
    if isinstance(go_type, Map):
        return can_fail(go_type.value)
    return False


def problems(go_type: GoType, value: str, path: Text, depth: int = 0) -> str:
    """A text naming where decoding the present value fails (``<path>: <problem>``, several joined
    with ``, ``), or ``''``."""
    if isinstance(go_type, Struct):
        parts = [_field_problems(f, value, path, depth) for f in go_type.fields if can_fail(f.type)]
        return parts[0] if len(parts) == 1 else f"[{', '.join(parts)}].filter(p{depth}, p{depth} != '').join(', ')"
    if isinstance(go_type, Slice):
        i, x = f"i{depth}", f"x{depth}"
        inner = problems(go_type.item, x, path.index(i), depth + 1)
        return f"{value}.transformList({i}, {x}, {inner}).filter({x}, {x} != '').join(', ')"
    if isinstance(go_type, Map) and go_type.value is QUANTITY:
        k, q = f"k{depth}", f"q{depth}"
        text = path + "." + Text.expr(k) + f": {INVALID_QUANTITY} " + Text.expr(cel.quote(q))
        return f"{value}.transformList({k}, {q}, !isQuantity(string({q})), {text}).join(', ')"
    raise TypeError(f"no CEL decoding check for {go_type.go_name}")


def _field_problems(f: Field, value: str, path: Text, depth: int) -> str:
    member_path = path.child(f.name)
    if isinstance(f.type, Ptr):
        inner = problems(f.type.to, f"{value}.{f.name}", member_path, depth)
        return f"(has({value}.{f.name}) ? {inner} : '')"
    return problems(f.type, field(value, f), member_path, depth)
