"""Functions small enough to hold in mind: no function or method of the package is above
cyclomatic complexity 10 as radon counts it (every branch, loop, boolean operator, comprehension
and conditional expression), the threshold of ruff's C901."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function

PACKAGE = Path(__file__).resolve().parents[1] / "webhook"
LIMIT = 10


def _functions(blocks: Iterable[Function | Class]) -> Iterator[Function]:
    for block in blocks:
        if isinstance(block, Class):
            yield from _functions(block.methods)
        else:
            yield block
            yield from _functions(block.closures)


def test_no_function_is_above_complexity_10() -> None:
    offenders = sorted(
        {
            f"{path.relative_to(PACKAGE.parent)}:{function.lineno} {function.fullname} ({function.complexity})"
            for path in PACKAGE.rglob("*.py")
            for function in _functions(cc_visit(path.read_text()))
            if function.complexity > LIMIT
        }
    )
    assert offenders == []
