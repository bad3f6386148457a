"""The backward engine: torch's Engine::execute in miniature.

1. Count, for every node reachable from the roots, how many edges point at it.
2. Pop ready nodes from a priority queue (highest sequence number first, i.e.
   the most recently created node; AccumulateGrad nodes first of all), run its
   tensor hooks, capture grads asked for by autograd.grad, run the node, free its
   saved tensors unless retain_graph, validate each produced grad against the
   receiving node's metadata (summing broadcast grads back), and add it into that
   node's input buffer. A node becomes ready when its count reaches zero.
"""

from __future__ import annotations

import heapq
import itertools
import sys
import weakref
from collections.abc import Callable, Sequence

import numpy as np

from . import anomaly_mode, dispatch, dtypes, messages, tensor_metadata
from .grad_mode import is_grad_enabled, set_grad_enabled
from .graph import MAX_SEQUENCE, TASK_NODES, Edge, GraphRoot, Meta, Node, check_hook_value
from .tensor import Tensor


class AccumulateGrad(Node):
    """The sink for a leaf: adds incoming grads into ``variable.grad``."""

    def __init__(self, variable: Tensor) -> None:
        super().__init__([], sequence_nr=MAX_SEQUENCE)
        self.variable = variable
        self.input_metadata = [variable._meta()]
        self.tensor_pre_hooks = {0: variable._leaf_hooks}
        # the dtype grads are cast to: the leaf's grad_dtype when this node was made, and
        # whenever it is set later (None: no cast); a node dropped by a .data of another
        # dtype keeps casting to the old one
        self.grad_dtype = variable._grad_dtype_target()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        new = grads[0]
        if new is None:
            return []
        var = self.variable
        # torch checks requires_grad when the node runs: a leaf that stopped requiring grad
        # (requires_grad_(False) after the graph was built) gets no grad; its post-accumulate
        # hooks still run.
        if not var.requires_grad:
            pass
        elif var._grad is None:
            # torch steals the incoming grad when nothing else references it (a refcount
            # test: here _run's `inputs` (kept for node post-hooks), the copy of it passed to
            # apply, our local and getrefcount's argument) ...
            if not is_grad_enabled() and sys.getrefcount(new) <= 4 and _obeys_layout(new, var):
                var._grad = new.detach()        # shares the buffer's version counter
            else:
                # ... otherwise copies it into a fresh tensor laid out by the contract:
                # version 1, and under create_graph a CopyBackwards grad_fn.
                fresh = Tensor(_contract_layout(new, var), new.dtype, new.device)
                var._grad = dispatch.copy_(fresh, new)
        elif not is_grad_enabled():
            g = var._grad._data   # in place, same object; a bfloat16 sum rounded once
            g[...] = dtypes.fit(g + dtypes.cast(new._data, var._grad.dtype.np), var._grad.dtype)
            var._grad._version_counter.bump()
        else:
            var._grad = var._grad + new
        # register_post_accumulate_grad_hook: each hook receives the leaf itself; as in
        # python_hook.cpp's _call_hooks, a result other than None or its argument is checked
        # like a tensor hook's and passed to the next hook instead, and is an error at the end.
        arg, replaced = var, False
        for hook in list(var._post_accumulate_grad_hooks.values()):
            result = hook(arg)
            if result is None or result is arg:
                continue
            check_hook_value(arg, result, hook)
            arg, replaced = result, True
        if replaced:
            raise RuntimeError(messages.POST_ACCUMULATE_HOOK_RETURNED)
        return []


def _obeys_layout(g: Tensor, var: Tensor) -> bool:
    """torch's obeys_layout_contract (autograd/utils/grad_layout_contract.h): a grad is
    stolen only if laid out as the leaf is when the leaf is non-overlapping and dense
    (channels_last included; size-1 dims aside, unless of stride 0), else only if
    row-major. An expanded grad (sum/mean backward) never is: it is copied."""
    if not g._data.flags.writeable:
        return False
    if not tensor_metadata.dense(var._data):
        return bool(g._data.flags.c_contiguous)
    return all(gs == vs if n != 1 else gs != 0 for n, gs, vs in
               zip(g.shape, g.stride(), var.stride(), strict=True))


def _contract_layout(g: Tensor, var: Tensor) -> np.ndarray:
    """clone_obey_contract's buffer: the leaf's strides if it is non-overlapping and dense
    (empty_strided), else row-major."""
    if not tensor_metadata.dense(var._data):
        return np.empty(g.shape, g.dtype.np)
    flat = np.empty(var._data.size, g.dtype.np)
    strides = tuple(s * flat.itemsize for s in var.stride())
    return np.lib.stride_tricks.as_strided(flat, var._data.shape, strides, writeable=True)


def gradient_edge(t: Tensor) -> Edge:
    """Where a grad for t must be sent: its grad_fn, or its AccumulateGrad if a leaf."""
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    # torch's grad_accumulator() reads the leaf's own flag (requires_grad_), not
    # requires_grad(): a view made under no_grad of a tensor that requires grad reports
    # requires_grad=True through its base, yet has neither a grad_fn nor an accumulator.
    if t._requires_grad:
        node = t._accumulator() if t._accumulator is not None else None
        if node is None:
            # held weakly, as torch's grad_accumulator_: the graph's edges keep it alive, and
            # a leaf holding its node strongly would be a cycle (node -> variable -> node)
            # that keeps every graph ending at a leaf alive until the cycle collector runs
            node = AccumulateGrad(t)
            t._accumulator = weakref.ref(node)
        return (node, 0)
    return (None, 0)


def _expandable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    if len(shape) > len(to):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(to), strict=False))


def validate_outputs(edges: Sequence[Edge], grads: list[Tensor | None], node_name: str,
                     custom_function: bool = False) -> list[Tensor | None]:
    out: list[Tensor | None] = []
    for i, ((fn, nr), g) in enumerate(zip(edges, grads, strict=False)):
        if fn is None or g is None:
            out.append(g)
            continue
        meta: Meta = fn.input_metadata[nr]
        if g._data.shape != meta.shape:
            if not _expandable(meta.shape, g._data.shape):
                raise RuntimeError(messages.invalid_gradient_shape(
                    node_name, i, messages.sizes(g.shape), messages.sizes(meta.shape)))
            g = dispatch.sum_to(g, meta.shape)
        if g._dtype.is_complex and not meta.dtype.is_complex:
            if custom_function:
                # engine.cpp validate_outputs' check: only derivatives.yaml's formulas take
                # the real part (handle_r_to_c); a custom Function's backward must itself
                raise RuntimeError(messages.GRAD_COMPLEX_FOR_REAL_INPUT)
            # derivatives.yaml's handle_r_to_c: a real input's gradient is the real part of
            # the complex one its formula gives (at::real, a view)
            g = dispatch.real(g)
        # a leaf's AccumulateGrad casts to the leaf's grad_dtype (None: no cast)
        want = fn.grad_dtype if isinstance(fn, AccumulateGrad) else meta.dtype
        if want is not None and g._dtype is not want:
            g = dispatch.to(g, want)
        out.append(g)
    return out


def _accumulate(old: Tensor, new: Tensor) -> Tensor:
    """InputBuffer::add. torch adds in place when nobody else holds the buffered tensor
    (a reference-count test); that is visible as the final .grad's _version."""
    if not is_grad_enabled() and old._base is None and sys.getrefcount(old) <= 3 \
            and old._data.flags.writeable and old.dtype is new.dtype:
        old._data[...] = dtypes.fit(old._data + new._data, old.dtype)
        old._version_counter.bump()
        return old
    return old + new


def _needed(root: Node, must_run: set[Node], captures: set[Node]) -> dict[Node, bool]:
    """exec_info: a node runs if it must (a target leaf) or feeds a node that runs or
    whose input is captured. Iterative post-order DFS; graphs are DAGs."""
    needed: dict[Node, bool] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        n, children_done = stack.pop()
        if children_done:
            needed[n] = n in must_run or any(
                fn is not None and (needed[fn] or fn in captures) for fn, _ in n.next_edges)
        elif n not in needed:
            needed[n] = False
            stack.append((n, True))
            stack.extend((fn, False) for fn, _ in n.next_edges
                         if fn is not None and fn not in needed)
    return needed


def _dependencies(root: Node) -> dict[Node, int]:
    deps: dict[Node, int] = {}
    stack, seen = [root], {root}
    while stack:
        n = stack.pop()
        for fn, _ in n.next_edges:
            if fn is None:
                continue
            deps[fn] = deps.get(fn, 0) + 1
            if fn not in seen:
                seen.add(fn)
                stack.append(fn)
    return deps


def _call_pre_hooks(node: Node, inputs: list[Tensor | None]) -> list[Tensor | None]:
    """torch's call_tensor_pre_hooks: tensor hooks (called even with an undefined grad, as
    None), then retain_grad's hooks (which skip undefined grads)."""
    if not node.tensor_pre_hooks and not node.retains_grad_hooks:   # the common case
        return inputs
    for nr, hooks in list(node.tensor_pre_hooks.items()):
        for hook in list(hooks.values()):
            result = hook(inputs[nr])  # type: ignore[arg-type]
            check_hook_value(inputs[nr], result, hook)
            if result is not None:
                inputs[nr] = result
    for nr, retain in list(node.retains_grad_hooks.items()):
        if inputs[nr] is not None:
            retain(inputs[nr])  # type: ignore[arg-type]
    return inputs


def execute(root_edges: Sequence[Edge], grads: Sequence[Tensor | None], retain_graph: bool,
            create_graph: bool, capture: Sequence[Edge] | None = None,
            accumulate_into: Sequence[Edge] | None = None) -> list[Tensor | None]:
    """Run backward from the roots' edges (gradient_edge of each output tensor, or a
    GradientEdge). With capture, return the grads flowing into those edges instead of
    accumulating (autograd.grad); with accumulate_into, only run what is needed to reach
    those edges' nodes, and run them (backward(inputs=...))."""
    # torch's formulas give inf and nan silently: NumPy's RuntimeWarnings (0 ** x backward,
    # an inf - inf in a sum of grads) are not torch's and must not leak from a backward.
    with set_grad_enabled(create_graph), np.errstate(all="ignore"):
        root_grads = validate_outputs(root_edges, list(grads), "GraphRoot")
        if len(root_edges) == 1:
            graph_root, nr = root_edges[0]
            assert graph_root is not None
            first: list[Tensor | None] = [None] * len(graph_root.input_metadata)
            first[nr] = root_grads[0]
        else:
            graph_root = GraphRoot(list(root_edges), root_grads)
            first = []
        _tasks.append(GraphTask())
        try:
            result = _run(graph_root, first, retain_graph, capture, accumulate_into)
            _run_final_callbacks(_tasks[-1].final_callbacks)
        finally:
            _tasks.pop()
        return result


class GraphTask:
    """What torch keeps per backward call and exposes to Python while it runs: an id, the
    nodes it will execute, and its final callbacks (Engine::queue_callback)."""

    _ids = itertools.count()

    def __init__(self) -> None:
        self.id = next(GraphTask._ids)
        self.final_callbacks: list[Callable[[], object]] = []
        self.nodes: set[Node] = set()           # nodes_in_graph: reachable from the root
        self.needed: dict[Node, bool] | None = None  # exec_info; None: every node runs


# The running graph tasks, innermost (a reentrant backward's) last.
_tasks: list[GraphTask] = []


def current_graph_task_id() -> int:
    """torch._C._current_graph_task_id: -1 outside backward."""
    return _tasks[-1].id if _tasks else -1


def will_engine_execute_node(node: Node) -> bool:
    """torch._C._will_engine_execute_node: whether the running backward executes `node`."""
    if not _tasks:
        raise RuntimeError(messages.WILL_EXECUTE_OUTSIDE_BACKWARD)
    task = _tasks[-1]
    return node in task.nodes and (task.needed is None or task.needed.get(node, False))


def queue_callback(callback: Callable[[], object]) -> None:
    if not _tasks:
        raise RuntimeError(messages.QUEUE_CALLBACK_OUTSIDE_BACKWARD)
    _tasks[-1].final_callbacks.append(callback)


def _run_final_callbacks(callbacks: list[Callable[[], object]]) -> None:
    """exec_post_processing: in order, after every node ran; a callback may queue more,
    which run in the same loop."""
    i = 0
    while i < len(callbacks):
        callbacks[i]()
        i += 1


class ExecutionEngine:
    """torch.autograd.Variable._execution_engine: the engine's Python face."""

    @staticmethod
    def queue_callback(callback: Callable[[], object]) -> None:
        queue_callback(callback)


def _run(graph_root: Node, first: list[Tensor | None], retain_graph: bool,
         capture: Sequence[Edge] | None, accumulate_into: Sequence[Edge] | None
         ) -> list[Tensor | None]:
    capture_edges = list(capture or ())
    captures = {fn for fn, _ in capture_edges if fn is not None}
    must_run = {fn for fn, _ in accumulate_into or () if fn is not None}
    needed = _needed(graph_root, must_run, captures) if captures or must_run else None
    TASK_NODES.append(None if needed is None else
                      {n for n, run in needed.items() if run} | captures)
    try:
        return _execute_nodes(graph_root, first, retain_graph, needed, captures,
                              capture_edges)
    finally:
        TASK_NODES.pop()


def _execute_nodes(graph_root: Node, first: list[Tensor | None], retain_graph: bool,
                   needed: dict[Node, bool] | None, captures: set[Node],
                   capture_edges: list[Edge]) -> list[Tensor | None]:
    deps = _dependencies(graph_root)
    if _tasks:
        _tasks[-1].nodes, _tasks[-1].needed = {graph_root, *deps}, needed
    buffers: dict[Node, list[Tensor | None]] = {graph_root: first}
    captured: list[Tensor | None] = [None] * len(capture_edges)
    tie = itertools.count()
    ready: list[tuple[int, int, Node]] = [(-graph_root.sequence_nr, next(tie), graph_root)]
    while ready:
        node = heapq.heappop(ready)[2]
        try:
            outputs = _evaluate(node, buffers.pop(node), retain_graph, needed, captures,
                                capture_edges, captured)
        except Exception:
            # the first error of this backward names the node's forward (graph task's
            # set_exception); an enclosing backward names its own node in turn
            if anomaly_mode.is_anomaly_enabled():
                anomaly_mode.print_stack(node)
            raise
        if outputs is None:
            continue
        for i, (fn, nr) in enumerate(node.next_edges):
            g, outputs[i] = outputs[i], None   # moved into the buffer, as torch std::moves it
            if fn is None or (needed is not None and not (needed[fn] or fn in captures)):
                continue
            buf = buffers.setdefault(fn, [None] * len(fn.input_metadata))
            if g is not None:
                old, buf[nr] = buf[nr], None
                buf[nr] = g if old is None else _accumulate(old, g)
                del old, g
            deps[fn] -= 1
            if deps[fn] == 0:
                heapq.heappush(ready, (-fn.sequence_nr, next(tie), fn))
    return captured


def _evaluate(node: Node, inputs: list[Tensor | None], retain_graph: bool,
              needed: dict[Node, bool] | None, captures: set[Node],
              capture_edges: list[Edge], captured: list[Tensor | None]
              ) -> list[Tensor | None] | None:
    """torch's evaluate_function for one ready node: its grads for its next functions, or
    None where the node does not run (its inputs only captured)."""
    runs = needed is None or needed[node]
    # torch calls tensor hooks before capturing only for nodes that will not run.
    if not runs:
        inputs = _call_pre_hooks(node, inputs)
    for k, (fn, nr) in enumerate(capture_edges):
        if fn is node:
            captured[k] = inputs[nr]
    if not runs:
        return None
    # torch's call_function: tensor pre-hooks, node pre-hooks, the node, validation,
    # then node hooks, which see (grad_inputs, grad_outputs) and may replace grad_inputs.
    inputs = node.call_pre_hooks(_call_pre_hooks(node, inputs))
    anomaly_mode.running.append(node)
    try:
        outputs = node.apply(list(inputs))
    finally:
        anomaly_mode.running.pop()
    if needed is not None and node.computes_only_wanted:
        outputs = [g if node.should_compute(i) else None for i, g in enumerate(outputs)]
    if not retain_graph:
        node.release_variables()
    outputs = validate_outputs(node.next_edges, outputs, node.name(),
                               getattr(node, "is_custom_function", False))
    if node.post_hooks:
        outputs = node.call_post_hooks(outputs, inputs)
    if anomaly_mode.is_anomaly_enabled() and anomaly_mode.is_anomaly_check_nan_enabled():
        for i, g in enumerate(outputs):
            if g is not None and np.isnan(g._data).any():
                raise RuntimeError(messages.anomaly_nan(node.name(), i))
    return outputs

