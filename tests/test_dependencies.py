"""The package uses its dependencies through what they make public, read off its source: no name
starting with ``_`` imported from a dependency, read off a dependency's module or passed to one as a
keyword, and no subclass of a dependency's class that the dependency's top-level package does not
export (its ``__all__``, or else a public name of it). A dependency is anything outside ``webhook``,
the standard library included (whose documented modules, ``collections.abc`` say, each export their
own names); a name between double underscores (``__version__``) is public.

What a dependency keeps to itself may change in any release without a word, and a server built on
it stops working, or stops enforcing its limits, on an upgrade that changed nothing it documents."""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "webhook"

DOCUMENTED_BASES = {
    "prometheus_client.registry.Collector": "prometheus_client's documented base of a custom collector",
    "kubernetes.client.ApiClient": "the Kubernetes client's API client, public in kubernetes.client",
}
"""Classes a dependency documents as public in a module of its own rather than at its top level."""

DOCUMENTED_KEYWORDS = {
    "_request_timeout": "a parameter every method of the Kubernetes client's generated API documents",
    "_preload_content": "the same",
    "_content_type": "the same",
}
"""Keywords a dependency documents although their names begin with ``_``."""


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class Dependencies(ast.NodeVisitor):
    """The dependency names a module binds by its imports, and its uses of what they keep private."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.bound: dict[str, str] = {}
        """Local name: the dotted path it was imported as."""
        self.found: list[str] = []
        self.bases: list[tuple[int, str]] = []

    def flag(self, node: ast.AST, what: str) -> None:
        self.found.append(f"{self.path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', 0)} {what}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] != "webhook":
                self.imported(node, alias.name, alias.asname or alias.name.split(".")[0], alias.name if alias.asname else alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or module.split(".")[0] in ("webhook", "__future__"):
            return
        for alias in node.names:
            self.imported(node, f"{module}.{alias.name}", alias.asname or alias.name, f"{module}.{alias.name}")

    def imported(self, node: ast.AST, dotted: str, local: str, target: str) -> None:
        if any(private(part) for part in dotted.split(".")):
            self.flag(node, f"imports {dotted}")
        self.bound[local] = target

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted path of ``name.attr.attr`` rooted at a dependency's name, else None."""
        if isinstance(node, ast.Name):
            return self.bound.get(node.id)
        if isinstance(node, ast.Attribute):
            root = self.resolve(node.value)
            return None if root is None else f"{root}.{node.attr}"
        return None

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root = self.resolve(node.value)
        if root is not None and private(node.attr):
            self.flag(node, f"reads {root}.{node.attr}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        called = self.resolve(node.func)
        for keyword in node.keywords:
            if called is not None and keyword.arg is not None and private(keyword.arg) and keyword.arg not in DOCUMENTED_KEYWORDS:
                self.flag(node, f"passes {keyword.arg}= to {called}")
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            dotted = self.resolve(base.value if isinstance(base, ast.Subscript) else base)
            if dotted is not None:
                self.bases.append((node.lineno, dotted))
        self.generic_visit(node)


def load(dotted: str) -> object:
    """The object a dotted path names: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ImportError(dotted)


def exported(dotted: str) -> bool:
    """Whether the dependency's top-level package (a standard module: the class's own module)
    offers the class under a public name."""
    module, _, _ = dotted.rpartition(".")
    stdlib = dotted.split(".")[0] in sys.stdlib_module_names
    if stdlib and any(private(part) for part in module.split(".")):
        return False
    top = importlib.import_module(module if stdlib else dotted.split(".")[0])
    cls = load(dotted)
    names = getattr(top, "__all__", None)
    public = names if names is not None else [name for name in vars(top) if not name.startswith("_")]
    return any(getattr(top, name, None) is cls for name in public)


def modules() -> Iterator[Path]:
    yield from sorted(PACKAGE.rglob("*.py"))


def scanned(path: Path) -> Dependencies:
    visitor = Dependencies(path)
    visitor.visit(ast.parse(path.read_text(), str(path)))
    return visitor


def test_no_private_name_of_a_dependency_is_imported_read_or_passed() -> None:
    assert [found for path in modules() for found in scanned(path).found] == []


def test_no_class_extends_one_a_dependency_does_not_export() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line} extends {dotted}"
        for path in modules()
        for line, dotted in scanned(path).bases
        if dotted not in DOCUMENTED_BASES and not exported(dotted)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("source", "found"),
    [
        pytest.param("from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol\nclass P(HttpToolsProtocol): pass", [], id="import-ok"),
        pytest.param("from uvicorn.server import _helper", ["imports uvicorn.server._helper"], id="private-import"),
        pytest.param("import uvicorn._types", ["imports uvicorn._types"], id="private-module"),
        pytest.param("import asyncio\nasyncio._get_running_loop()", ["reads asyncio._get_running_loop"], id="private-attribute"),
        pytest.param("import uvicorn\nuvicorn.Config(app, _loop=None)", ["passes _loop= to uvicorn.Config"], id="private-keyword"),
        pytest.param("import uvicorn\nuvicorn.__version__", [], id="dunder"),
    ],
)
def test_the_checks_see_what_they_look_for(source: str, found: list[str], tmp_path: Path) -> None:
    path = PACKAGE / "example.py"
    visitor = Dependencies(path)
    visitor.visit(ast.parse(source))
    assert [line.split(" ", 1)[1] for line in visitor.found] == found


def test_a_class_a_package_keeps_in_a_module_of_its_own_is_not_exported() -> None:
    assert not exported("uvicorn.protocols.http.httptools_impl.HttpToolsProtocol")
    assert exported("uvicorn.Server") and exported("asyncio.Protocol") and exported("collections.abc.Sequence")
