"""The import graph of reference_engine/, read from its source (ast), not by importing it.

Each `import` inside the package is one edge from the importing module to the module it
names (`from . import views` names views; `from .tensor import Tensor` names tensor), of one
of four kinds:

- top: at module level, among the imports at the head of the file;
- late: at module level after other code (`# noqa: E402`), the way a circle is held open;
- local: inside a function, run when the function is first called;
- typing: under `if TYPE_CHECKING:`, never run (left out of the graph).

Modules are named relative to the package: `tensor`, `ops.arithmetic`, `nn` (nn/__init__.py),
`__init__` (the package itself). Run as a script to print the graph's figures and its
strongly connected components (the import circles):

    python -m tests.reference_engine.import_graph [PACKAGE_DIR]
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "reference_engine"
ROOT = "__init__"
KINDS = ("top", "late", "local", "typing")
RUNTIME = ("top", "late", "local")


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: str
    line: int


def module_names(package: Path) -> dict[str, Path]:
    """Every module of the package by its relative name."""
    names = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts) or ROOT] = path
    return names


def _package_of(name: str, path: Path) -> list[str]:
    """The package a relative import in module `name` starts from, as name parts."""
    parts = [] if name == ROOT else name.split(".")
    return parts if path.name == "__init__.py" else parts[:-1]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, str]]:
    """Each import statement with its kind."""
    found: list[tuple[ast.Import | ast.ImportFrom, str]] = []
    head = True   # still among the imports (and docstring) at the head of the file

    def visit(node: ast.AST, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.append((child, kind))
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                visit(child, "local")
            elif isinstance(child, ast.If) and _is_type_checking(child):
                visit(child, "typing")
            else:
                visit(child, kind)

    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            found.append((stmt, "top" if head else "late"))
            continue
        if isinstance(stmt, ast.If) and _is_type_checking(stmt):
            visit(stmt, "typing")
            continue
        docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        if not docstring:
            head = False
        visit(stmt, "local" if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
              else "top" if head else "late")
    return found


def edges(package: Path = PACKAGE) -> list[Edge]:
    """Every import from one module of the package to another."""
    modules = module_names(package)
    out = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, kind in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [a.name.split(".", 1)[1] for a in node.names
                           if a.name.startswith(package.name + ".")]
            elif node.level == 0:
                mod = node.module or ""
                if mod != package.name and not mod.startswith(package.name + "."):
                    continue
                base = mod.split(".")[1:]
                targets = _targets(base, node, modules)
            else:
                base = _package_of(name, path)
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                base = base + (node.module.split(".") if node.module else [])
                targets = _targets(base, node, modules)
            out += [Edge(name, t, kind, node.lineno) for t in targets if t != name]
    return out


def _targets(base: list[str], node: ast.ImportFrom, modules: dict[str, Path]) -> list[str]:
    """`from <base> import a, b`: a submodule where one is named, else base itself."""
    prefix = ".".join(base)
    found = []
    for alias in node.names:
        sub = f"{prefix}.{alias.name}" if prefix else alias.name
        found.append(sub if sub in modules else prefix or ROOT)
    return sorted(set(found))


def graph(all_edges: list[Edge], kinds: tuple[str, ...] = RUNTIME) -> dict[str, set[str]]:
    g: dict[str, set[str]] = {}
    for e in all_edges:
        if e.kind in kinds:
            g.setdefault(e.source, set()).add(e.target)
            g.setdefault(e.target, set())
    return g


def components(g: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components (Tarjan), largest first; singletons included."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            found.append(comp)

    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(found, key=lambda c: (-len(c), sorted(c)))


def circles(all_edges: list[Edge], kinds: tuple[str, ...] = RUNTIME) -> list[set[str]]:
    """The components of more than one module, the package facade left out (it imports
    everything to assemble the package; nothing in the package imports it)."""
    g = graph([e for e in all_edges if ROOT not in (e.source, e.target)], kinds)
    return [c for c in components(g) if len(c) > 1]


def cycle_through(all_edges: list[Edge], start: str, within: set[str],
                  kinds: tuple[str, ...] = RUNTIME) -> list[Edge]:
    """A shortest import cycle from `start` back to it, inside the modules `within` (a
    circle of circles()): its edges in order, each with the line of its import."""
    first: dict[tuple[str, str], Edge] = {}
    for e in sorted(all_edges, key=lambda e: (e.source, e.target, e.line)):
        if e.kind in kinds and e.source in within and e.target in within:
            first.setdefault((e.source, e.target), e)
    step: dict[str, Edge] = {}   # breadth first: the edge that reached each module
    frontier = [start]
    while frontier:
        reached = []
        for source in frontier:
            for (s, target), e in first.items():
                if s != source or target in step:
                    continue
                step[target] = e
                if target == start:
                    path = [e]
                    while path[0].source != start:
                        path.insert(0, step[path[0].source])
                    return path
                reached.append(target)
        frontier = reached
    return []


def describe(cycle: list[Edge]) -> str:
    """`a:12 -> b:40 -> a`: each module with the line of its import of the next."""
    if not cycle:
        return "(no cycle)"
    return " -> ".join([f"{e.source}:{e.line}" for e in cycle] + [cycle[-1].target])


def report(package: Path = PACKAGE) -> str:
    all_edges = edges(package)
    modules = module_names(package)
    lines = [f"{len(modules)} modules under {package}"]
    statements = Counter(e.kind for e in {(e.source, e.line, e.kind): e
                                          for e in all_edges}.values())
    pairs = Counter(e.kind for e in {(e.source, e.target, e.kind): e for e in all_edges}.values())
    for kind in KINDS:
        lines.append(f"  {kind:<7} imports: {statements[kind]:>3} statements, "
                     f"{pairs[kind]:>3} module pairs")
    for label, kinds in (("all run-time imports", RUNTIME), ("module-level only", ("top",)),
                         ("top and late", ("top", "late"))):
        found = circles(all_edges, kinds)
        lines.append(f"circles ({label}): {len(found)}")
        lines += [f"  {len(c)} modules: {', '.join(sorted(c))}" for c in found]
    local = sorted({(e.source, e.target) for e in all_edges if e.kind == "local"})
    late = sorted({(e.source, e.target) for e in all_edges if e.kind == "late"})
    lines.append(f"late imports: {', '.join(f'{s} -> {t}' for s, t in late) or 'none'}")
    lines.append(f"local imports: {', '.join(f'{s} -> {t}' for s, t in local) or 'none'}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE))
