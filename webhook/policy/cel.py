"""CEL text for the generated policy: strings built at evaluation time, field errors as the webhook
renders them, and JSON values compared, printed and decoded as the Go types the webhook decodes
into (``gocompat.gotypes``). The expressions compile on the oldest API server the chart supports,
which lacks ``flatten``, ``slice`` and ``cel.bind`` (docs/policy.md). Opaque parameters are read to
any depth, as Go reads them: the webhook's own limit would take as many nested comprehensions, slow
to compile. Nested comprehensions name their variables by depth (``i0``, ``x1``) so that an inner
one never hides an outer one's.
"""

from __future__ import annotations

from dataclasses import dataclass

from webhook.core.gocompat.fielderrors import ErrorType
from webhook.core.gocompat.gotypes import BOOL, INT64, INVALID_QUANTITY, QUANTITY, RAW, STRING, Field, GoType, Map, Ptr, Slice, Struct


def lit(text: str) -> str:
    """A CEL string literal holding ``text``."""
    if not text.isprintable():
        raise ValueError(f"not printable: {text!r}")
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def quote(value: str) -> str:
    """A string value as Grove prints a Go string (``%q``), but for control characters other than
    line breaks, which ``strings.quote`` writes as they are."""
    return f"strings.quote(string({value}))"


@dataclass(frozen=True, slots=True)
class Text:
    """A string built at evaluation time: fixed texts (neighbours written as one literal) and CEL
    expressions of type string, in order."""

    parts: tuple[tuple[bool, str], ...] = ()
    """(is fixed text, the text or the expression)."""

    @classmethod
    def of(cls, fixed: object) -> Text:
        """A string, or a field path as it prints."""
        return cls(((True, str(fixed)),))

    @classmethod
    def expr(cls, expression: str) -> Text:
        return cls(((False, expression),))

    def __add__(self, other: Text | str) -> Text:
        parts = list(self.parts)
        for part in (Text.of(other) if isinstance(other, str) else other).parts:
            if parts and parts[-1][0] and part[0]:
                parts[-1] = (True, parts[-1][1] + part[1])
            else:
                parts.append(part)
        return Text(tuple(parts))

    def child(self, name: str) -> Text:
        return self + f".{name}"

    def index(self, variable: str) -> Text:
        """``<path>[<variable>]``, for an index variable."""
        return self + "[" + Text.expr(f"string({variable})") + "]"

    def __str__(self) -> str:
        return " + ".join(lit(text) if fixed else text for fixed, text in self.parts) if self.parts else "''"


def error(path: Text, kind: ErrorType, detail: str = "", value: str | None = None) -> Text:
    """A field error as apimachinery renders it (``fielderrors.FieldError``); ``value`` is a CEL
    expression of type string."""
    text = path + f": {kind.value}"
    if value is not None:
        text = text + ": " + Text.expr(value)
    return text + f": {detail}" if detail else text


def when(condition: str, items: str) -> str:
    return f"({condition} ? {items} : [])"


def bind(name: str, value: str, body: str) -> str:
    """``body`` with ``name`` bound to ``value``, evaluated once: a one-element ``map``."""
    return f"[{value}].map({name}, {body})[0]"


def joined(texts: str, depth: int) -> str:
    """The strings of a list nested ``depth`` levels deep, joined with ``, `` (a string is never
    empty, a list may be)."""
    if depth == 1:
        return f"{texts}.join(', ')"
    item = f"j{depth}"
    return f"{texts}.map({item}, {joined(item, depth - 1)}).filter({item}, {item} != '').join(', ')"


def counted(texts: str, depth: int) -> str:
    if depth == 1:
        return f"size({texts})"
    item = f"n{depth}"
    return f"{texts}.map({item}, {counted(item, depth - 1)}).sum()"


ZEROS: dict[GoType, str] = {STRING: "''", INT64: "0", BOOL: "false", QUANTITY: "'0'", RAW: "null"}


def field(value: str, f: Field) -> str:
    """The field's value as Go decodes it into a non-pointer: its zero value when missing."""
    zero = ZEROS.get(f.type) or ("[]" if isinstance(f.type, Slice) else "{}")
    return f"{value}.?{f.name}.orValue({zero})"


def equal(go_type: GoType, a: str, b: str, depth: int = 0) -> str:
    """Whether two present values of ``go_type`` are ``Semantic.DeepEqual``: a missing field is its
    zero value, nil equals empty, a pointer compares what it points to, a quantity its value."""
    if isinstance(go_type, Struct):
        return " && ".join(_equal_field(f, a, b, depth) for f in go_type.fields)
    if isinstance(go_type, Slice):
        i, x = f"i{depth}", f"x{depth}"
        return f"(size({a}) == size({b}) && {a}.all({i}, {x}, {equal(go_type.item, x, f'{b}[{i}]', depth + 1)}))"
    if isinstance(go_type, Map):
        k = f"k{depth}"
        return f"(size({a}) == size({b}) && {a}.all({k}, {k} in {b} && {equal(go_type.value, f'{a}[{k}]', f'{b}[{k}]', depth + 1)}))"
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
    """What ``json.Marshal`` prints for a present value of ``go_type``, but for ``<``, ``>``, ``&``
    and control characters other than line breaks, which ``strings.quote`` writes as they are."""
    if isinstance(go_type, Struct):
        parts = [_marshal_field(f, value, depth) for f in go_type.fields]
        return str(Text.of("{") + Text.expr(f"({' + '.join(parts)}).join(',')") + "}")
    if isinstance(go_type, Slice):
        x = f"x{depth}"
        return str(Text.of("[") + Text.expr(f"{value}.map({x}, {marshal(go_type.item, x, depth + 1)}).join(',')") + "]")
    if go_type is STRING:
        return quote(value)
    raise TypeError(f"no CEL text for {go_type.go_name}")


def _marshal_field(f: Field, value: str, depth: int) -> str:
    """A list of one ``"name":value`` text, or of none when ``omitempty`` leaves the field out."""
    go_type, member = (f.type.to, f"{value}.{f.name}") if isinstance(f.type, Ptr) else (f.type, field(value, f))
    name = Text.of(f'"{f.name}":')
    text = f"[{name + Text.expr(marshal(go_type, member, depth))}]"
    if isinstance(f.type, Ptr):
        return when(f"has({member})", text)
    if not f.omitempty:
        return text
    return when(f"!({member} == '')" if f.type is STRING else f"!(size({member}) == 0)", text)


def can_fail(go_type: GoType) -> bool:
    """Whether decoding a value of ``go_type`` that the CRD schema accepted can still fail (a
    quantity that does not parse)."""
    if isinstance(go_type, Struct):
        return any(can_fail(f.type) for f in go_type.fields)
    inner = {Ptr: "to", Slice: "item", Map: "value"}.get(type(go_type))
    return go_type is QUANTITY or (inner is not None and can_fail(getattr(go_type, inner)))


def problems(go_type: GoType, value: str, path: Text, depth: int = 0) -> str:
    """Where Go's decoder refuses the present value (``<path>: <problem>``, several joined with
    ``, ``), or ``''``."""
    if isinstance(go_type, Struct):
        parts = [_field_problems(f, value, path, depth) for f in go_type.fields if can_fail(f.type)]
        return parts[0] if len(parts) == 1 else f"[{', '.join(parts)}].filter(p{depth}, p{depth} != '').join(', ')"
    if isinstance(go_type, Slice):
        i, x = f"i{depth}", f"x{depth}"
        inner = problems(go_type.item, x, path.index(i), depth + 1)
        return f"{value}.transformList({i}, {x}, {inner}).filter({x}, {x} != '').join(', ')"
    if isinstance(go_type, Map) and go_type.value is QUANTITY:
        k, q = f"k{depth}", f"q{depth}"
        text = path + "." + Text.expr(k) + f": {INVALID_QUANTITY} " + Text.expr(quote(q))
        return f"{value}.transformList({k}, {q}, !isQuantity(string({q})), {text}).join(', ')"
    raise TypeError(f"no CEL decoding check for {go_type.go_name}")


def _field_problems(f: Field, value: str, path: Text, depth: int) -> str:
    if isinstance(f.type, Ptr):
        return f"(has({value}.{f.name}) ? {problems(f.type.to, f'{value}.{f.name}', path.child(f.name), depth)} : '')"
    return problems(f.type, field(value, f), path.child(f.name), depth)
