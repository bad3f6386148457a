"""One tensor read without disturbing it: its values (or a summary of a large one), its
.grad, its graph's signature, and the snapshot a trace records of it (observe.py reads every
name of a program with these).

Observation must not change what it observes: `.grad` is read with warnings silenced (a
non-leaf's `.grad` read would otherwise warn), and values are copied out through
`detach().clone()`: detach() shares the version counter without bumping it, and the clone keeps
numpy() from touching the tensor's own storage.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from conformance.case import classify
from conformance.run import limits
from conformance.run.engine import Engine
from conformance.run.tensor_summary import summarise
from conformance.run.trace import Snapshot, TensorSnapshot, TensorSummary

# Graph signatures stop after this many nodes.
MAX_GRAPH_NODES = 64
SCALARS = (bool, int, float, complex, str)


def tensor_values(t: Any) -> np.ndarray:
    try:
        # numpy() of the tensor itself would mark torch's storage not resizable (the array
        # shares it), and a later resize_ of the program's tensor would then fail: the copy
        # is made by the engine first, and numpy() shares only that
        copy = t.detach().cpu().clone()
        if str(t.dtype) == "torch.bfloat16":
            # NumPy has no bfloat16 (torch's numpy() refuses it): every bfloat16 value is a
            # float32 value, so its float32 copy holds it exactly
            copy = copy.float()
        return np.asarray(copy.numpy())
    except RuntimeError as e:
        # torch's efficient zero tensors (the grads of some double backwards) refuse a
        # plain .numpy(); force=True materialises them. Where that raises too (a tensor that
        # cannot be detached), the first error is what reading raised.
        try:
            return np.array(t.numpy(force=True), copy=True)
        except Exception:
            raise e from None


def observed_values(engine: Engine, t: Any) -> np.ndarray | TensorSummary:
    """A copy of `t`'s values, or above limits.SUMMARY_THRESHOLD elements their summary."""
    if math.prod(t.shape) <= limits.SUMMARY_THRESHOLD:
        return tensor_values(t)
    return tensor_summary(engine, t)


def read_values(engine: Engine, t: Any) -> np.ndarray | TensorSummary | str:
    """observed_values, or the text of what reading them raised: vmap's BatchedTensor (a
    tangent inside jacobian(strategy="forward-mode", vectorize=True), given to a function of
    the program) cannot be detached, so its values cannot be copied out; that is compared,
    and the program goes on as it would without the harness."""
    try:
        return observed_values(engine, t)
    except Exception as e:
        return raised_on_read(e)


def tensor_summary(engine: Engine, t: Any) -> TensorSummary:
    """Statistics of all of `t`'s elements, computed from its distinct data: a dimension of
    stride 0 (an `expand`) is read at index 0 and weighs its elements by its size, so an
    expanded view is never materialised."""
    d = t
    shape = tuple(int(n) for n in t.shape)
    stride = getattr(t, "stride", None)
    strides = tuple(int(n) for n in stride()) if callable(stride) else (1,) * len(shape)
    repeated = [i for i, (n, st) in enumerate(zip(shape, strides, strict=True))
                if n > 1 and st == 0]
    if repeated:
        index = tuple(0 if i in repeated else slice(None) for i in range(len(shape)))
        # A view of `t` itself (not of its detach()): an engine that tracks views by element
        # positions (reference_engine) then indexes the positions it holds, which are
        # expanded too, instead of numbering every element of a new base.
        with engine.no_grad():
            d = _attempt(lambda: t[index])
        if isinstance(d, RaisedOnRead):
            d = t.detach()[index]
    weight = math.prod(shape[i] for i in repeated)
    if math.prod(d.shape) > limits.MAX_TENSOR_ELEMENTS:
        raise limits.RunLimit(f"cannot observe a tensor of shape {list(shape)} without copying "
                              f"more than {limits.MAX_TENSOR_ELEMENTS} elements (the engine's "
                              "tensors report no stride() showing an expansion)")
    return summarise(tensor_values(d), math.prod(shape), weight)


def snapshot_bytes(snapshots: Mapping[str, Snapshot]) -> int:
    """Estimated memory of snapshots (for the trace budget, limits.MAX_TRACE_BYTES)."""
    total = 0
    for s in snapshots.values():
        total += limits.SNAPSHOT_OVERHEAD_BYTES
        if isinstance(s, TensorSnapshot):
            if isinstance(s.values, np.ndarray):
                total += s.values.nbytes
            if s.grad is not None:
                total += snapshot_bytes({"grad": s.grad})
        elif isinstance(s.value, str):
            total += len(s.value)
    return total


def read_grad(t: Any) -> Any:
    # observe() silences warnings around a whole observation: reading a non-leaf's .grad
    # warns, and observing must not.
    try:
        return t.grad
    except Exception:
        return _attempt(lambda: t.grad)


# An observation's reads of graph nodes, by id: (node, type name, its edges). Names share
# most of their graphs, and reading a node's edges is the costly part of a signature (torch
# builds the tuple and a wrapper per edge afresh on every read). The node is held with its
# read, so its id stays its own: an id found here is that very node.
NodeReads = dict[int, tuple[Any, str, tuple[tuple[Any, int], ...]]]


def graph_signature(root: Any, nodes: NodeReads | None = None,
                    earlier: NodeReads | None = None) -> str | None:
    """The autograd graph under `root` as text, e.g. `MulBackward0(AccumulateGrad, None)`.

    Each edge is `Name`, or `Name@k` for output k > 0 of a multi-output node; a node met
    again (the graph is a DAG) is written `#i`, its index in first-visit order. `nodes`
    collects the reads; a node read by the observation before (`earlier`) is not read
    again: a node's type and edges are fixed when it is made (an in-place op or a view's
    rebase gives the tensor a new node, never new edges to an old one).
    """
    if root is None:
        return None
    reads: NodeReads = {} if nodes is None else nodes
    before: NodeReads = {} if earlier is None else earlier
    seen: dict[int, int] = {}
    # the text in pieces, joined once: nesting strings would copy each subtree's text once
    # per level above it
    out: list[str] = []

    # an explicit stack of what is left to write (a node to visit, or text), not a recursive
    # closure: a nested function calling itself refers to itself through its closure's cell,
    # a cycle that would hold `reads` (the graph's nodes) until the cycle collector ran, so a
    # graph the program let go of could outlive it by statements, its saved tensors with it
    # (where torch's is freed at once)
    todo: list[tuple[bool, Any]] = [(True, root)]
    while todo:
        is_node, item = todo.pop()
        if not is_node:
            out.append(item)
            continue
        key = id(item)
        if key in seen:
            out.append(f"#{seen[key]}")
            continue
        seen[key] = len(seen)
        if len(seen) > MAX_GRAPH_NODES:
            out.append("...")
            continue
        read = reads.get(key)
        if read is None:
            read = before.get(key)
            if read is None:
                read = (item, type(item).__name__, tuple(item.next_functions))
            reads[key] = read
        out.append(read[1])
        edges = read[2]
        if not edges:
            continue
        parts: list[tuple[bool, Any]] = [(False, "(")]
        for i, (child, nr) in enumerate(edges):
            if i:
                parts.append((False, ", "))
            if child is None:
                parts.append((False, "None"))
                continue
            parts.append((True, child))
            if nr:
                parts.append((False, f"@{nr}"))
        parts.append((False, ")"))
        todo.extend(reversed(parts))
    return "".join(out)


def _attempt(read: Callable[[], Any]) -> Any:
    """`read()`, or a description of the error it raised: torch raises on reading some
    attributes (the grad_fn of a view whose base was modified in a forbidden way), and that
    is an observation to compare, not a reason to stop observing."""
    try:
        return read()
    except Exception as e:
        return raised_on_read(e)


def raised_on_read(e: Exception) -> RaisedOnRead:
    """An error a read raised, as an observation: its kind and normalised text."""
    text = classify.normalise_text(classify.text_of(e))
    kind = classify.classify(text, warning=False, exception=classify.exception_name(e))
    return RaisedOnRead(f"raises {kind}: {classify.bounded(text)}")


class RaisedOnRead(str):
    pass


UNREAD = object()


def read_version(t: Any) -> int | str:
    # Inference tensors have no version counter: torch raises on reading it.
    version = _attempt(lambda: t._version)
    return version if isinstance(version, RaisedOnRead) else int(version)


def snapshot_tensor(engine: Engine, t: Any, alias: str | None = None,
                    grad: Any = None, nodes: NodeReads | None = None,
                    earlier: NodeReads | None = None) -> TensorSnapshot:
    """`t` as observed; `grad` is its .grad as read by the caller (None: not included);
    `nodes` and `earlier` the graph nodes read by this observation and the one before."""
    try:
        # the common case in one go: none of these reads raises
        grad_fn = t.grad_fn
        requires_grad = bool(t.requires_grad)
        is_leaf = bool(t.is_leaf)
        version: int | str = int(t._version)
    except Exception:
        # some read raises (a view's grad_fn after a forbidden in-place write, an inference
        # tensor's version): each field as read on its own, a raise observed as its text
        return _snapshot_tensor_field_by_field(engine, t, alias, grad, nodes, earlier)
    return TensorSnapshot(
        type=type(t).__name__,
        shape=tuple(map(int, t.shape)),
        dtype=str(t.dtype),
        device=str(t.device),
        values=read_values(engine, t),
        requires_grad=requires_grad,
        is_leaf=is_leaf,
        grad_fn=None if grad_fn is None else type(grad_fn).__name__,
        graph=graph_signature(grad_fn, nodes, earlier),
        retains_grad=bool(t.retains_grad),
        version=version,
        is_view=bool(t._is_view()),
        alias=alias,
        grad=None if grad is None or not engine.is_tensor(grad)
        else snapshot_tensor(engine, grad, nodes=nodes, earlier=earlier),
        grad_read_error=grad if isinstance(grad, RaisedOnRead) else None,
    )


def _snapshot_tensor_field_by_field(engine: Engine, t: Any, alias: str | None,
                                    grad: Any, nodes: NodeReads | None,
                                    earlier: NodeReads | None) -> TensorSnapshot:
    grad_fn = _attempt(lambda: t.grad_fn)
    if isinstance(grad_fn, RaisedOnRead):
        grad_fn_name: str | None = grad_fn
        graph = None
    else:
        grad_fn_name = None if grad_fn is None else type(grad_fn).__name__
        graph = graph_signature(grad_fn, nodes, earlier)
    return TensorSnapshot(
        type=type(t).__name__,
        shape=tuple(int(n) for n in t.shape),
        dtype=str(t.dtype),
        device=str(t.device),
        values=read_values(engine, t),
        requires_grad=bool(_attempt(lambda: t.requires_grad)),
        is_leaf=bool(_attempt(lambda: t.is_leaf)),
        grad_fn=grad_fn_name,
        graph=graph,
        retains_grad=bool(t.retains_grad),
        version=read_version(t),
        is_view=bool(t._is_view()),
        alias=alias,
        grad=None if grad is None or not engine.is_tensor(grad)
        else snapshot_tensor(engine, grad, nodes=nodes, earlier=earlier),
        grad_read_error=grad if isinstance(grad, RaisedOnRead) else None,
    )
