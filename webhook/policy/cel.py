"""CEL text, written from Python values, for the expressions of the generated policy.

The policy's expressions must compile on the oldest API server the chart supports: a 1.34
kube-apiserver compiles new expressions with its 1.33 CEL environment, which has two-variable
comprehensions (``transformList``, ``all(i, v, ...)``), ``strings.quote``, ``join`` and the
Kubernetes list functions (``indexOf``, ``sum``), but neither ``flatten`` nor ``slice`` (1.34) nor
``cel.bind``. So lists nested by owner stay nested (their texts are joined level by level), and a
value needed several times is bound by ``bind``, a one-element ``map``.
"""

from __future__ import annotations

from dataclasses import dataclass

from webhook.core.gocompat.fielderrors import ErrorType


def lit(text: str) -> str:
    """A CEL string literal holding ``text``."""
    if not text.isprintable():
        raise ValueError(f"not printable: {text!r}")
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def quote(value: str) -> str:
    """The text of a string value as Grove prints a Go string (``%q``): ``strings.quote`` escapes
    quotes, backslashes and line breaks as Go does, but writes other control characters as they are."""
    return f"strings.quote(string({value}))"


@dataclass(frozen=True, slots=True)
class Text:
    """A string built at evaluation time: fixed text and CEL expressions of type string, in order.
    Neighbouring fixed texts are written as one literal."""

    parts: tuple[tuple[bool, str], ...] = ()
    """(is fixed text, the text or the expression)."""

    @classmethod
    def of(cls, fixed: str) -> Text:
        return cls(((True, fixed),))

    @classmethod
    def expr(cls, expression: str) -> Text:
        return cls(((False, expression),))

    def __add__(self, other: Text | str) -> Text:
        more = Text.of(other) if isinstance(other, str) else other
        parts = list(self.parts)
        for part in more.parts:
            if parts and parts[-1][0] and part[0]:
                parts[-1] = (True, parts[-1][1] + part[1])
            else:
                parts.append(part)
        return Text(tuple(parts))

    def child(self, name: str) -> Text:
        """A field path one member deeper: ``<path>.<name>``."""
        return self + f".{name}"

    def index(self, variable: str) -> Text:
        """A field path one item deeper: ``<path>[<variable>]``, for an index variable."""
        return self + "[" + Text.expr(f"string({variable})") + "]"

    def __str__(self) -> str:
        if not self.parts:
            return "''"
        return " + ".join(lit(text) if fixed else text for fixed, text in self.parts)


def error(path: Text, kind: ErrorType, detail: str = "", value: str | None = None) -> Text:
    """A field error as apimachinery renders it (``fielderrors.FieldError``): ``<path>: <type>``,
    then ``: <value>`` (a CEL expression of type string) and ``: <detail>`` when given."""
    text = path + f": {kind.value}"
    if value is not None:
        text = text + ": " + Text.expr(value)
    return text + f": {detail}" if detail else text


def when(condition: str, items: str) -> str:
    """``items`` (a list expression) when ``condition`` holds, else an empty list."""
    return f"({condition} ? {items} : [])"


def bind(name: str, value: str, body: str) -> str:
    """``body`` with ``name`` bound to ``value``, evaluated once (there is no ``cel.bind``)."""
    return f"[{value}].map({name}, {body})[0]"


def joined(texts: str, depth: int) -> str:
    """The strings of a list nested ``depth`` levels deep, joined with ``, `` (a string is never
    empty, a list may be)."""
    if depth == 1:
        return f"{texts}.join(', ')"
    item = f"j{depth}"
    return f"{texts}.map({item}, {joined(item, depth - 1)}).filter({item}, {item} != '').join(', ')"


def counted(texts: str, depth: int) -> str:
    """How many strings a list nested ``depth`` levels deep holds."""
    if depth == 1:
        return f"size({texts})"
    item = f"n{depth}"
    return f"{texts}.map({item}, {counted(item, depth - 1)}).sum()"
