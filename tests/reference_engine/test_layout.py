"""reference_engine's imports keep to the layers its package docstring draws.

The drawing (reference_engine/__init__.py) is the one statement of the layers and of the
calls up a layer; this test reads it and the import graph (import_graph.py, from the
source), and fails when a module imports across layers the wrong way, a new call up
appears or a listed one is gone, a module sits in no layer, or a new import circle forms.
"""

from __future__ import annotations

import ast
import itertools
import re
from fnmatch import fnmatchcase

import pytest

from tests.reference_engine import import_graph as ig
from tests.reference_engine.import_graph import Edge

# The circles the layering leaves (imports up a layer left out): tensor and graph need each
# other (a node holds tensor hooks and checks grads; a tensor holds its grad_fn; Tensor's
# methods in tensor_hooks and tensor_metadata use the graph's handles and Meta), and the op
# families call each other in their backward formulas (the formulas are written in ops, so
# that create_graph=True differentiates them again). Any other circle is a defect.
CORE_CIRCLE = {"tensor", "tensor_hooks", "tensor_metadata", "graph"}


def drawing() -> tuple[list[tuple[str, list[str]]], set[tuple[str, str]]]:
    """The layers, top first, each with its module patterns, and the calls up a layer,
    read from the package docstring."""
    doc = ast.get_docstring(ast.parse((ig.PACKAGE / "__init__.py").read_text()))
    assert doc, "reference_engine/__init__.py has no docstring"
    layers: list[tuple[str, list[str]]] = []
    up: set[tuple[str, str]] = set()
    paragraphs = [p.splitlines() for p in doc.split("\n\n")]
    for header, block in itertools.pairwise(paragraphs):
        if not all(line.startswith("    ") for line in block):
            continue
        if header[0].startswith("Layers,"):
            for line in block:
                name, modules = re.split(r"\s{2,}", line.strip(), maxsplit=1)
                modules = re.sub(r"\(.*?\)", "", modules)
                layers.append((name, [m.strip() for m in modules.split(",")]))
        elif header[-1].endswith("and no others:"):
            for line in block:
                source, targets = line.strip().split(" -> ")
                up |= {(source, t.strip()) for t in targets.split(",")}
    assert layers and up, "the package docstring's layer drawing was not found"
    return layers, up


def layer_of(layers: list[tuple[str, list[str]]]) -> dict[str, int]:
    """Each module's layer, 0 the bottom. `ops.*` names the package ops and its modules."""
    out: dict[str, int] = {}
    for height, (_, patterns) in enumerate(reversed(layers)):
        for module in ig.module_names(ig.PACKAGE):
            if any(fnmatchcase(module, p) or p == module + ".*" for p in patterns):
                out.setdefault(module, height)
    return out


def violations(edges: list[Edge], layers: list[tuple[str, list[str]]],
               up: set[tuple[str, str]]) -> list[str]:
    """What breaks the drawing, one line each."""
    modules = set(ig.module_names(ig.PACKAGE))
    height = layer_of(layers)
    names = [name for name, _ in reversed(layers)]
    found = [f"{m}: in no layer of the drawing" for m in sorted(modules - set(height))]
    runtime = [e for e in edges if e.kind in ig.RUNTIME
               and e.source in height and e.target in height]
    seen_up = set()
    for e in runtime:
        if e.target == ig.ROOT:
            found.append(f"{e.source}:{e.line} imports the package facade")
        elif height[e.target] > height[e.source]:
            pair = (e.source, e.target)
            seen_up.add(pair)
            if pair not in up:
                found.append(f"{e.source}:{e.line} imports {e.target}, a layer up "
                             f"({names[height[e.source]]} -> {names[height[e.target]]})")
            elif e.kind == "top":
                found.append(f"{e.source}:{e.line} imports {e.target} (a call up) at the "
                             f"head of the module: import it at call time")
    found += [f"{s} -> {t}: listed as a call up, but no such import (strike it)"
              for s, t in sorted(up - seen_up)]
    if ig.circles(edges, ("top",)):
        found.append(f"import-time circle: {ig.circles(edges, ('top',))}")
    level = [e for e in runtime if height[e.target] <= height[e.source]]
    for circle in ig.circles(level):
        where = {names[height[m]] for m in circle}
        if where == {"ops"} or circle == CORE_CIRCLE:   # the two named above
            continue
        found.append(f"import circle: {', '.join(sorted(circle))}")
    return found


def test_the_imports_keep_to_the_drawn_layers() -> None:
    layers, up = drawing()
    assert violations(ig.edges(), layers, up) == []


def test_the_drawing_names_every_layer_once() -> None:
    layers, _ = drawing()
    assert [n for n, _ in layers] == ["facade", "library", "autograd", "ops", "core", "base"]
    patterns = [p for _, ps in layers for p in ps]
    assert len(patterns) == len(set(patterns))


# Each breach the check must catch, made by adding one import to the real graph.
@pytest.mark.parametrize("edge, message", [
    (Edge("dtypes", "tensor", "local", 1), "dtypes:1 imports tensor, a layer up"),
    (Edge("ops.elementwise", "function", "late", 1), "a layer up (ops -> autograd)"),
    (Edge("tensor", "views", "top", 1), "at the head of the module"),
    (Edge("saved", "__init__", "local", 1), "imports the package facade"),
    (Edge("graph", "saved", "local", 1),
     "import circle: engine, forward_ad, graph, saved, tensor"),
    (Edge("graph", "tensor", "top", 1), "import-time circle"),   # today a local import
])
def test_a_wrong_import_is_caught(edge: Edge, message: str) -> None:
    layers, up = drawing()
    found = violations([*ig.edges(), edge], layers, up)
    assert any(message in v for v in found), found


def test_a_stale_call_up_is_caught() -> None:
    layers, up = drawing()
    found = violations(ig.edges(), layers, {*up, ("graph", "views")})
    assert found == ["graph -> views: listed as a call up, but no such import (strike it)"]


def test_a_module_in_no_layer_is_caught() -> None:
    layers, up = drawing()
    without_warn = [(name, [m for m in ms if m != "warn"]) for name, ms in layers]
    assert "warn: in no layer of the drawing" in violations(ig.edges(), without_warn, up)


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
