"""The module layering of crawler/ and processors/: the core imports nothing above it, and no
import cycle exists anywhere.

The imports are read from the source with :mod:`ast` (nothing is imported), inside functions
too; relative imports are resolved against the importing module's package. ``from a import b``
counts as importing the module ``a.b`` when that is a module, else ``a``. Importing a module also
runs the ``__init__`` of every package above it, so those packages count as imported too (except
the packages enclosing the importer, which are already running by then).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("crawler", "processors")

CORE = ("crawler.processor", "crawler.chain", "crawler.curi", "crawler.decide")
"""The core modules (and packages) checked by the layering test."""
ABOVE_CORE = ("crawler.sheets", "crawler.order", "crawler.control", "crawler.cli")
"""Packages the core must not import."""

TYPE_ONLY_ALLOWED = {
    # ProcessorContext.order is annotated with the order's schema so that processors read typed
    # settings (ctx.order.robots, ...). The import sits under TYPE_CHECKING: the core loads no
    # module of crawler.order at run time (the transitive check below holds that).
    ("crawler.processor", "crawler.order.schema"),
    ("crawler.processor", "crawler.order"),  # the package of the above
}
"""(importer, imported) pairs allowed in the core, for type checkers only (known debt)."""

KNOWN_CYCLES: list[frozenset[str]] = []
"""Import cycles tolerated as known debt (none)."""


@dataclass(frozen=True)
class Import:
    """One import statement's target module, as written in ``source``."""

    source: str
    target: str
    line: int
    type_only: bool


def module_files() -> dict[str, Path]:
    """Every module of crawler/ and processors/ by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, type_only: bool) -> Iterator[tuple[ast.AST, bool]]:
    """Every node below ``node``, with whether it sits in an ``if TYPE_CHECKING:`` body."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield stmt, True
                yield from _walk(stmt, True)
            for stmt in child.orelse:
                yield stmt, type_only
                yield from _walk(stmt, type_only)
            continue
        yield child, type_only
        yield from _walk(child, type_only)


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` is or lies in (None for outside modules)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def imports_of(module: str, known: dict[str, Path]) -> list[Import]:
    """The imports of ``module`` that land in crawler/ or processors/."""
    path = known[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []
    for node, type_only in _walk(tree, False):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)])
                stem = f"{base}.{node.module}" if node.module else base
            else:
                stem = node.module or ""
            names = [
                f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in known else stem
                for alias in node.names
            ]
        for name in names:
            target = _resolve(name, known)
            if target is None or target == module:
                continue
            found.append(Import(module, target, getattr(node, "lineno", 0), type_only))
            # Importing a.b.c runs a/__init__ and a/b/__init__ first (unless already running).
            parts = target.split(".")[:-1]
            while parts:
                parent = ".".join(parts)
                if parent in known and not (module + ".").startswith(parent + "."):
                    found.append(Import(module, parent, getattr(node, "lineno", 0), type_only))
                parts.pop()
    return found


def import_graph(*, with_type_only: bool) -> dict[str, set[str]]:
    """Module → the modules it imports (run-time imports only unless ``with_type_only``)."""
    known = module_files()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for module in known:
        for imp in imports_of(module, known):
            if with_type_only or not imp.type_only:
                graph[module].add(imp.target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _in(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_the_core_imports_nothing_above_it() -> None:
    known = module_files()
    core = [m for m in known if _in(m, CORE)]
    assert "crawler.processor" in core and "crawler.decide.decide_rule" in core
    wrong = [
        f"{known[imp.source].relative_to(ROOT)}:{imp.line} imports {imp.target}"
        for module in core
        for imp in imports_of(module, known)
        if _in(imp.target, ABOVE_CORE)
        and not (imp.type_only and (imp.source, imp.target) in TYPE_ONLY_ALLOWED)
    ]
    assert wrong == []
    # Nor through a module in between, at run time.
    graph = import_graph(with_type_only=False)
    for module in core:
        reached: set[str] = set()
        todo = [module]
        while todo:
            for nxt in graph[todo.pop()] - reached:
                reached.add(nxt)
                todo.append(nxt)
        assert sorted(m for m in reached if _in(m, ABOVE_CORE)) == [], module


def test_no_import_cycle_among_the_modules() -> None:
    # Imports under ``if TYPE_CHECKING:`` are left out: they never run, so they cannot make a
    # module load half-initialised. Imports inside functions count.
    cycles = [
        sorted(c)
        for c in strongly_connected(import_graph(with_type_only=False))
        if c not in KNOWN_CYCLES
    ]
    assert cycles == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(graph) == [frozenset({"a", "b", "c"})]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []
