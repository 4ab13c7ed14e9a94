"""The package's import graph, read from the source (no module is imported).

Rule (docs/architecture.md): an arrow is an import that runs when the module is imported: a
statement at module level or in a class body, including inside ``try`` / ``if`` blocks, but not
inside ``if TYPE_CHECKING:`` and not inside a function (a function-level import is lazy: it runs
when the function is called, after every module has loaded, and is the allowed way to reach up a
layer, e.g. a registry loading its catalog). ``from a.b import c`` is an arrow to ``a.b`` and, if
``a.b.c`` is a module, to ``a.b.c``. Importing ``a.b.c`` also runs ``a/__init__.py`` and
``a/b/__init__.py``; those implicit parent arrows are not counted (as in grimp or
import-linter), since every package ``__init__`` that re-exports its modules would otherwise
be a circle.

Run ``python tests/import_graph.py`` to print the circles.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "npusched"


def modules(src: Path = SRC) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of the package."""
    out: dict[str, Path] = {}
    for f in sorted((src / PACKAGE).rglob("*.py")):
        parts = list(f.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _eager_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements that run at import time (module level and class bodies)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _eager_imports(node.body)
            yield from _eager_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _eager_imports(block)
            for h in node.handlers:
                yield from _eager_imports(h.body)
        elif isinstance(node, ast.With | ast.ClassDef):
            yield from _eager_imports(node.body)


def _all_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, lazy ones too (``if TYPE_CHECKING:`` blocks excepted)."""
    for node in body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _all_imports(node.orelse)
            continue
        for n in ast.walk(node):
            if isinstance(n, ast.Import | ast.ImportFrom):
                yield n


def graph(src: Path = SRC, *, lazy: bool = False) -> dict[str, set[str]]:
    """Module -> the package modules it imports eagerly (``lazy``: also inside functions)."""
    mods = modules(src)
    g: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in (_all_imports if lazy else _eager_imports)(tree.body):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    base = ".".join([*pkg, base] if base else pkg)
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                if t in mods and t != name:
                    g[name].add(t)
    return g


#: package -> packages it must not import, lazily or not (the data flow of DESIGN.md: models ->
#: hardware -> policies -> sim -> metrics -> report, workloads beside; experiments wires them,
#: the CLI sits on top)
LAYERS: dict[str, tuple[str, ...]] = {
    "models": ("hardware", "policies", "sim", "experiments", "report", "cli"),
    "hardware": ("policies", "sim", "experiments", "report", "cli"),
    "workloads": ("hardware", "policies", "sim", "experiments", "report", "cli"),
    "policies": ("sim", "experiments", "report", "cli"),
    "sim": ("experiments", "report", "cli"),
    "metrics": ("sim", "experiments", "report", "cli"),
    "report": ("experiments", "cli"),
    "experiments": ("cli",),
}


def breaches(g: dict[str, set[str]]) -> list[tuple[str, str]]:
    """``(importer, imported)`` pairs that break :data:`LAYERS`."""
    out = []
    for m, deps in sorted(g.items()):
        top = m.split(".")[1] if "." in m else ""
        for d in sorted(deps):
            if (d.split(".")[1] if "." in d else "") in LAYERS.get(top, ()):
                out.append((m, d))
    return out


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(out)


if __name__ == "__main__":
    found = circles(graph())
    for c in found:
        print(" <-> ".join(c))
    print(f"{len(found)} circle(s)")
    for a, b in breaches(graph(lazy=True)):
        print(f"layer breach: {a} -> {b}")
