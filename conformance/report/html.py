"""The run report as one self-contained page, `index.html`, next to `conformance.json`.

Python prepares the data (the records of conformance.json, display forms of the divergent
values, and a layout of each divergent tensor's autograd graph in both engines); the static
template `page.html` holds the HTML, CSS and JS that render it. The page loads nothing:
no network, no other file.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from conformance.report import status_line
from conformance.report.directory import write_atomic
from conformance.run import verdicts

TEMPLATE = "page.html"
PASSING = verdicts.PASSING
# Leaves of a divergent value shown before the rest is elided.
MAX_SHOWN_LEAVES = 1000

# Graph drawing, in SVG user units (px).
NODE_HEIGHT = 24
LAYER_GAP = 44
NODE_GAP = 14
CHAR_WIDTH = 7.3
PAD = 8


def write(json_path: Path) -> Path:
    """Render `index.html` next to `json_path` (a conformance.json) and return its path."""
    path = json_path.with_name("index.html")
    write_atomic(path, render(json.loads(json_path.read_text(encoding="utf-8"))))
    return path


def render(report: dict[str, Any]) -> str:
    """The page for a parsed conformance.json."""
    info = report.get("run_info", {})
    items = report.get("items", [])
    status = report.get("status")
    if not isinstance(status, dict):  # a report of schema 1: derived as the writer would
        word, line = status_line.line(items, info)
        status = {"outcome": word, "line": line}
    data = {
        "status": status,
        "run_info": info,
        "items": [_page_record(r) for r in items],
        # computed once, for this page and summary.md alike
        "hidden_devices": status_line.hidden_devices(items),
        "generated": report.get("generated"),
        "expectations": report.get("expectations"),
        "missing_api": report.get("missing_api") or {},
        # what the page counts as passing is the verdicts' own (run/verdicts.py)
        "passing": list(PASSING),
    }
    title = (f"Autograd conformance: {info.get('engine', '?')} against torch "
             f"{info.get('torch_version', '?')}")
    template = resources.files("conformance.report").joinpath(TEMPLATE).read_text(encoding="utf-8")
    # The title first: the data may contain the placeholder text, the template does not.
    return (template.replace("__TITLE__", html.escape(title))
            .replace("__DATA__", _script_json(data)))


def _script_json(value: Any) -> str:
    """JSON safe inside <script>: nothing in it can close the element or start a comment,
    and no NaN/Infinity (which JSON.parse rejects)."""
    text = json.dumps(_finite(value), ensure_ascii=True, separators=(",", ":"),
                      allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _page_record(record: dict[str, Any]) -> dict[str, Any]:
    record = dict(record)
    record["group"] = status_line.failure_group(record)
    for key in ("divergence", "message_divergence"):
        d = record.get(key)
        if isinstance(d, dict):
            record[key] = _page_divergence(d)
    return record


def _page_divergence(d: dict[str, Any]) -> dict[str, Any]:
    d = dict(d)
    budget = [MAX_SHOWN_LEAVES]
    d["torch_shown"] = display(d.get("torch"), budget)
    budget = [MAX_SHOWN_LEAVES]
    d["engine_shown"] = display(d.get("engine"), budget)
    graphs = d.get("graphs")
    if isinstance(graphs, dict):
        d["drawings"] = draw_pair(graphs.get("torch"), graphs.get("engine"))
    return d


def display(value: Any, budget: list[int] | None = None) -> Any:
    """`value` as nested lists of display strings: floats as Python writes them (so -0.0,
    nan and inf survive), strings as they are, at most MAX_SHOWN_LEAVES leaves."""
    if budget is None:
        budget = [MAX_SHOWN_LEAVES]
    if isinstance(value, list):
        out = []
        for v in value:
            if budget[0] <= 0:
                out.append("…")
                break
            out.append(display(v, budget))
        return out
    budget[0] -= 1
    if isinstance(value, str):
        return value
    return repr(value)


# ---- graphs -----------------------------------------------------------------------------

@dataclass
class Node:
    label: str
    kind: str  # "node", "none" (an edge to no node) or "truncated"
    visit: int | None  # index in first-visit order (what `#k` refers to)
    children: list[int] = field(default_factory=list)  # edge indices
    layer: int = 0
    x: float = 0.0


@dataclass
class Edge:
    parent: int
    child: int
    output: int  # `@k`: output k of a multi-output node


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    # One entry per position of the signature in reading order: (token, node, incoming edge);
    # two graphs first differ where their tokens do.
    slots: list[tuple[str, int, int | None]] = field(default_factory=list)


class _Parser:
    """tensor_read.graph_signature's text back into a DAG: `Name(child, ...)`, `None`, `#k`
    (the k-th node in first-visit order), `...` (truncated), each edge optionally `@k`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.graph = Graph()
        self.visited: list[int] = []  # visit index -> node index

    def parse(self) -> Graph:
        self.edge(None)
        if self.pos != len(self.text):
            raise ValueError(f"unexpected {self.text[self.pos:]!r}")
        return self.graph

    def edge(self, parent: int | None) -> None:
        slot = len(self.graph.slots)
        self.graph.slots.append(("", -1, None))  # filled in once the edge is read
        token, node = self.term()
        output = 0
        if self.text.startswith("@", self.pos):
            output = int(self.number(self.pos + 1))
            token += f"@{output}"
        edge = None
        if parent is not None:
            edge = len(self.graph.edges)
            self.graph.edges.append(Edge(parent, node, output))
            self.graph.nodes[parent].children.append(edge)
        self.graph.slots[slot] = (token, node, edge)

    def number(self, start: int) -> str:
        end = start
        while end < len(self.text) and self.text[end].isdigit():
            end += 1
        if end == start:
            raise ValueError(f"expected a number at {start}")
        self.pos = end
        return self.text[start:end]

    def term(self) -> tuple[str, int]:
        """The token and node index of the term at pos; new nodes get their children."""
        nodes = self.graph.nodes
        if self.text.startswith("#", self.pos):
            k = int(self.number(self.pos + 1))
            if k >= len(self.visited):
                raise ValueError(f"#{k} refers to no earlier node")
            return f"#{k}", self.visited[k]
        end = self.pos
        while end < len(self.text) and self.text[end] not in "(),@ ":
            end += 1
        name = self.text[self.pos:end]
        if not name:
            raise ValueError(f"expected a node at {self.pos}")
        self.pos = end
        index = len(nodes)
        if name == "None":
            nodes.append(Node("None", "none", None))
            return "None", index
        kind = "truncated" if name == "..." else "node"
        nodes.append(Node(name, kind, len(self.visited)))
        self.visited.append(index)
        if not self.text.startswith("(", self.pos):
            return name + "()", index
        self.pos += 1
        while True:
            self.edge(index)
            if self.text.startswith(", ", self.pos):
                self.pos += 2
            elif self.text.startswith(")", self.pos):
                self.pos += 1
                break
            else:
                raise ValueError(f"expected ', ' or ')' at {self.pos}")
        return f"{name}({len(nodes[index].children)})", index


def parse_graph(signature: str) -> Graph:
    """Raises ValueError on text that is not a graph signature."""
    return _Parser(signature).parse()


def first_difference(a: Graph, b: Graph) -> int | None:
    """The first slot (position in reading order) where the graphs differ, or None."""
    for i, (sa, sb) in enumerate(zip(a.slots, b.slots, strict=False)):
        if sa[0] != sb[0]:
            return i
    return None if len(a.slots) == len(b.slots) else min(len(a.slots), len(b.slots))


def layout(graph: Graph, marked_slot: int | None) -> dict[str, Any]:
    """Layered top-down: a node's layer is its longest path from the root; within a layer
    nodes are ordered by their parents' positions, then in reading order."""
    nodes, edges = graph.nodes, graph.edges
    for _ in range(len(nodes)):  # longest path by relaxation: graphs are small DAGs
        changed = False
        for e in edges:
            if nodes[e.child].layer < nodes[e.parent].layer + 1:
                nodes[e.child].layer = nodes[e.parent].layer + 1
                changed = True
        if not changed:
            break
    parents: dict[int, list[int]] = {i: [] for i in range(len(nodes))}
    for e in edges:
        parents[e.child].append(e.parent)
    layers: list[list[int]] = [[] for _ in range(max((n.layer for n in nodes), default=0) + 1)]
    for i, n in enumerate(nodes):
        layers[n.layer].append(i)
    width = [max(44.0, CHAR_WIDTH * len(n.label) + 16) for n in nodes]
    order: dict[int, float] = {}
    for layer in layers:
        layer.sort(key=lambda i: (sum(order[p] for p in parents[i]) / len(parents[i])
                                  if parents[i] else 0.0, i))
        order.update((i, rank) for rank, i in enumerate(layer))
    layer_widths = [sum(width[i] for i in layer) + NODE_GAP * (len(layer) - 1)
                    for layer in layers]
    total = max(layer_widths, default=0.0)
    for layer, lw in zip(layers, layer_widths, strict=True):
        x = PAD + (total - lw) / 2
        for i in layer:
            nodes[i].x = x
            x += width[i] + NODE_GAP
    marked_node, marked_edge = (None, None)
    if marked_slot is not None and marked_slot < len(graph.slots):
        _, marked_node, marked_edge = graph.slots[marked_slot]

    def y(i: int) -> float:
        return PAD + nodes[i].layer * (NODE_HEIGHT + LAYER_GAP)

    return {
        "width": round(total + 2 * PAD, 1),
        "height": PAD * 2 + len(layers) * NODE_HEIGHT + (len(layers) - 1) * LAYER_GAP,
        "nodes": [{"x": round(n.x, 1), "y": y(i), "w": round(width[i], 1), "h": NODE_HEIGHT,
                   "label": n.label, "kind": n.kind, "visit": n.visit,
                   "marked": i == marked_node} for i, n in enumerate(nodes)],
        "edges": [{"x1": round(nodes[e.parent].x + width[e.parent] / 2, 1),
                   "y1": y(e.parent) + NODE_HEIGHT,
                   "x2": round(nodes[e.child].x + width[e.child] / 2, 1), "y2": y(e.child),
                   "output": e.output, "marked": k == marked_edge}
                  for k, e in enumerate(edges)],
    }


def draw_pair(torch_signature: str | None, engine_signature: str | None) -> dict[str, Any]:
    """Layouts of both graphs with their first difference marked, and which it is:
    `identical`, `differ`, or `unparsed` (then the page shows the signatures as text)."""
    graphs: dict[str, Graph | None] = {}
    for side, signature in (("torch", torch_signature), ("engine", engine_signature)):
        try:
            graphs[side] = None if signature is None else parse_graph(signature)
        except (ValueError, RecursionError):
            return {"status": "unparsed"}
    a, b = graphs["torch"], graphs["engine"]
    if a is None or b is None:
        # One side has no graph: the other's root is where they differ.
        return {"status": "differ",
                **{side: None if g is None else layout(g, 0) for side, g in graphs.items()}}
    slot = first_difference(a, b)
    return {"status": "identical" if slot is None else "differ",
            "torch": layout(a, slot), "engine": layout(b, slot)}
