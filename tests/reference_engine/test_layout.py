"""reference_engine's imports keep to the layers its package docstring draws.

The drawing (reference_engine/__init__.py) is the one statement of the layers; this test
reads it and the import graph (import_graph.py, from the source), and fails when a module
imports a layer above its own (the core reaches the ops only through dispatch.py's table,
filled by the facade), a module sits in no layer, an import circle is not one of the three
named below (tensor and graph; in-place and as_strided), or the basic ops
(ops/basic/) import an op module above them.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
from fnmatch import fnmatchcase

import pytest

from tests.reference_engine import import_graph as ig
from tests.reference_engine.import_graph import Edge

# The import circles the layering leaves, every run-time import counted (function-local ones
# too: a local import that only hides a cycle does not break it): a circle must lie inside
# one of these, and these are the circles exactly. tensor and graph need each other (a node
# holds tensor hooks and checks grads; a tensor holds its grad_fn; Tensor's methods in
# tensor_hooks and tensor_metadata use the graph's handles and Meta).
#
# The ops' circle is where backward formulas really recurse, as ATen's do (a formula is
# written in differentiable ops, so that create_graph=True differentiates it again):
# CopySlices (inplace) replays a view's as_strided function and regenerates its grad_fn
# (views_strided), whose formula writes with inplace's copy_. sum and expand recurse so too
# (sum's formula is expand, expand's is sum_to): they share one module (reductions), and
# no import circle. Every other module of ops/basic/ imports only modules below
# it (the package's docstring draws the order): a formula that would call an op above its
# own module moves that op's caller up (as pow went to powers.py, imag to complex_imag.py)
# or the shared piece down (creation meta to ops.creation_meta), never a new circle. Below
# the basic ops, importing none of them, the `below` row of the drawing: a helper the basic
# ops share with the families above goes there, not up into a family. A module joining a
# circle, or a new circle, fails the test, with one cycle through it named import by import.
BASIC = "ops.basic"
BASIC_MODULES = frozenset(m for m in ig.module_names(ig.PACKAGE) if m.startswith(BASIC + "."))
CORE_CIRCLE = frozenset({"tensor", "tensor_hooks", "tensor_metadata", "graph"})
INPLACE_STRIDED_CIRCLE = frozenset({"ops.basic.inplace", "ops.basic.views_strided"})
ALLOWED_CIRCLES = (CORE_CIRCLE, INPLACE_STRIDED_CIRCLE)


@functools.cache
def _read_edges() -> tuple[Edge, ...]:
    return tuple(ig.edges())   # parsing the package once, not once a test


def _edges() -> list[Edge]:
    return list(_read_edges())


def drawing() -> list[tuple[str, list[str]]]:
    """The layers, top first, each with its module patterns, read from the package
    docstring."""
    doc = ast.get_docstring(ast.parse((ig.PACKAGE / "__init__.py").read_text()))
    assert doc, "reference_engine/__init__.py has no docstring"
    layers: list[tuple[str, list[str]]] = []
    paragraphs = [p.splitlines() for p in doc.split("\n\n")]
    for header, block in itertools.pairwise(paragraphs):
        if header[0].startswith("Layers,") and all(line.startswith("    ") for line in block):
            for line in block:
                name, modules = re.split(r"\s{2,}", line.strip(), maxsplit=1)
                modules = re.sub(r"\(.*?\)", "", modules)
                layers.append((name, [m.strip() for m in modules.split(",")]))
    assert layers, "the package docstring's layer drawing was not found"
    return layers


def layer_of(layers: list[tuple[str, list[str]]]) -> dict[str, int]:
    """Each module's layer, 0 the bottom. `ops.*` names the package ops and its modules."""
    out: dict[str, int] = {}
    for height, (_, patterns) in enumerate(reversed(layers)):
        for module in ig.module_names(ig.PACKAGE):
            if any(fnmatchcase(module, p) or p == module + ".*" for p in patterns):
                out.setdefault(module, height)
    return out


def violations(edges: list[Edge], layers: list[tuple[str, list[str]]]) -> list[str]:
    """What breaks the drawing, one line each."""
    modules = set(ig.module_names(ig.PACKAGE))
    height = layer_of(layers)
    names = [name for name, _ in reversed(layers)]
    found = [f"{m}: in no layer of the drawing" for m in sorted(modules - set(height))]
    runtime = [e for e in edges if e.kind in ig.RUNTIME
               and e.source in height and e.target in height]
    for e in runtime:
        if e.target == ig.ROOT:
            found.append(f"{e.source}:{e.line} imports the package facade")
        elif height[e.target] > height[e.source]:
            found.append(f"{e.source}:{e.line} imports {e.target}, a layer up "
                         f"({names[height[e.source]]} -> {names[height[e.target]]})")
    below = circle_drawing()["below"]
    for e in runtime:
        if e.source.startswith(BASIC + ".") and height[e.target] == height[e.source] \
                and not e.target.startswith(BASIC + ".") and e.target not in below:
            found.append(f"{e.source}:{e.line} imports {e.target}, an op module not below the "
                         f"basic ops (the drawing's below row: {', '.join(sorted(below))})")
    if ig.circles(edges, ("top",)):
        found.append(f"import-time circle: {ig.circles(edges, ('top',))}")
    for circle in ig.circles(edges):
        if not any(circle <= allowed for allowed in ALLOWED_CIRCLES):
            # a cycle through a module no pinned circle holds, or (two pinned circles
            # joined) through the first module of the smaller pin; of a new circle, through
            # its first module outside the basic ops (the one that joined), else its first
            pinned = max(ALLOWED_CIRCLES, key=lambda a: len(circle & a))
            outside = sorted(circle - pinned, key=lambda m: (m.startswith(BASIC + "."), m))
            cycle = ig.describe(ig.cycle_through(edges, outside[0], circle))
            found.append(f"import circle: {', '.join(sorted(circle))}; e.g. {cycle}")
    return found


def test_the_imports_keep_to_the_drawn_layers() -> None:
    assert violations(_edges(), drawing()) == []


def test_the_drawing_names_every_layer_once() -> None:
    layers = drawing()
    assert [n for n, _ in layers] == ["facade", "library", "autograd", "ops", "core", "base"]
    patterns = [p for _, ps in layers for p in ps]
    assert len(patterns) == len(set(patterns))


def test_the_pinned_circles_are_the_graphs() -> None:
    """The circles are these exactly: a module that left one is struck from it (a pinned
    circle that is gone is struck out)."""
    assert sorted(map(sorted, ig.circles(_edges()))) == sorted(map(sorted, ALLOWED_CIRCLES))


def test_the_basic_ops_circle_is_held_late_once() -> None:
    """The ops circle is held open by one import at the foot of one module, which says why
    (the other direction a plain import at the head); no other import in ops/basic/ is late
    or inside a function."""
    late = [e for e in _edges() if e.source in BASIC_MODULES and e.kind in ("late", "local")]
    assert sorted((e.source, e.target, e.kind) for e in late) == [
        ("ops.basic.inplace", "ops.basic.views_strided", "late"),
    ]
    for e in late:
        lines = ig.module_names(ig.PACKAGE)[e.source].read_text().splitlines()
        comment = " ".join(lines[e.line - 3:e.line - 1])
        assert f"{e.target.rsplit('.', 1)[1]} imports this module" in comment, comment



def circle_drawing() -> dict[str, set[str]]:
    """The package docstring's drawing of the ops around their circle: its `above`, `basic`
    and `below` rows, each a set of modules (a row may run on over indented lines; the
    basic row names its modules inside ops.basic, after its `(ops/basic/)`)."""
    doc = ast.get_docstring(ast.parse((ig.PACKAGE / "__init__.py").read_text()))
    assert doc
    block = next(p.splitlines() for p in doc.split("\n\n") if p.startswith("    above "))
    rows: dict[str, list[str]] = {}
    for line in block:
        if not line.startswith("     "):   # a row's name, then its modules
            name, line = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            rows[name] = []
        rows[name] += [m.strip() for m in re.sub(r"\(.*?\)", "", line).split(",")
                       if m.strip()]
    rows["basic"] = [f"{BASIC}.{m}" for m in rows["basic"]]
    return {name: set(modules) for name, modules in rows.items()}


def test_the_drawing_of_the_ops_circle_is_the_graphs() -> None:
    """The docstring's basic row is the package ops.basic, and its `below` row every
    op-layer module the basic ops import (directly or not) and nothing else."""
    rows = circle_drawing()
    assert rows["basic"] == BASIC_MODULES
    graph = ig.graph([e for e in _edges() if ig.ROOT not in (e.source, e.target)])
    reached, todo = set(), list(BASIC_MODULES)
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in reached:
                reached.add(target)
                todo.append(target)
    ops_layer = {m for m, h in layer_of(drawing()).items() if h == 2}
    assert rows["below"] == (reached - BASIC_MODULES) & ops_layer


# Each breach the check must catch, made by adding one import to the real graph.
@pytest.mark.parametrize("edge, message", [
    (Edge("dtypes", "tensor", "local", 1), "dtypes:1 imports tensor, a layer up"),
    (Edge("ops.basic.elementwise", "function", "late", 1), "a layer up (ops -> autograd)"),
    (Edge("tensor", "ops.basic.views", "local", 1),
     "tensor:1 imports ops.basic.views, a layer up (core -> ops)"),
    (Edge("saved", "__init__", "local", 1), "imports the package facade"),
    (Edge("graph", "saved", "local", 1), "import circle: engine, forward_ad, graph, saved"),
    (Edge("ops.basic.elementwise", "ops.linalg", "local", 1),
     "ops.basic.elementwise:1 -> ops.linalg"),
    # the basic ops import an op module that is not below them (here one apart from them,
    # so no circle is made: the rule alone catches it)
    (Edge("ops.basic.views", "ops.special_kernels", "local", 3),
     "ops.basic.views:3 imports ops.special_kernels, an op module not below the basic ops"),
    # the cycle named import by import, from the module that joined (lines past the
    # added import's are today's, left out)
    (Edge("ops.common", "ops.basic.elementwise", "local", 7),
     "e.g. ops.common:7 -> ops.basic.elementwise:"),
    (Edge("ops.basic.elementwise", "ops.scans", "local", 9),
     "-> ops.basic.elementwise:9 -> ops.scans:"),
    (Edge("graph", "tensor", "top", 1), "import-time circle"),   # today a local import
    # a new circle inside the basic ops (copying is their bottom; elementwise imports it)
    (Edge("ops.basic.copying", "ops.basic.elementwise", "local", 5),
     "-> ops.basic.copying:5 -> ops.basic.elementwise:"),
    # sum and expand apart again: expand's formula in views calling reductions' sum_to
    (Edge("ops.basic.views", "ops.basic.reductions", "late", 2),
     "import circle: ops.basic.reductions, ops.basic.views"),
    # the ops circle joined by views (recording creation meta through inplace, as before)
    (Edge("ops.basic.views", "ops.basic.inplace", "local", 4),
     "-> ops.basic.views:4 -> ops.basic.inplace:"),
])
def test_a_wrong_import_is_caught(edge: Edge, message: str) -> None:
    found = violations([*_edges(), edge], drawing())
    assert any(message in v for v in found), found


def test_a_module_in_no_layer_is_caught() -> None:
    without_warn = [(name, [m for m in ms if m != "warn"]) for name, ms in drawing()]
    assert "warn: in no layer of the drawing" in violations(_edges(), without_warn)


def test_the_engine_imports_nothing_of_the_harness() -> None:
    offenders = []
    for name, path in ig.module_names(ig.PACKAGE).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots = [node.module.split(".")[0]]
            else:
                continue
            offenders += [f"{name}:{node.lineno} {r}" for r in roots
                          if r in ("conformance", "tests", "torch")]
    assert offenders == []


def test_the_core_reaches_the_ops_through_the_table() -> None:
    from reference_engine import dispatch
    from reference_engine.ops.basic import elementwise
    assert dispatch.add is elementwise.add
    with pytest.raises(AttributeError, match=r"provided by reference_engine/__init__\.py"):
        dispatch.no_such_op  # noqa: B018
    with pytest.raises(RuntimeError, match=r"dispatch\.add is provided twice"):
        dispatch.provide(add=elementwise.add)
