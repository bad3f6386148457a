"""torch.autograd's entry points: backward, grad, Variable, Function."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import autograd_graph as graph
from . import forward_ad, function, messages
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .autograd_graph import GradientEdge, edge_of
from .engine import ExecutionEngine, execute
from .function import Function, FunctionCtx
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .graph import Edge
from .ops import common, joining
from .tensor import Size, Tensor
from .warn import warn_once

__all__ = [
    "Function",
    "FunctionCtx",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "function",
    "grad",
    "graph",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
]

Root = Tensor | GradientEdge


def _tuple(x: Any) -> tuple[Any, ...]:
    if x is None:
        return ()
    return (x,) if isinstance(x, Tensor | GradientEdge) else tuple(x)


def _make_grads(outputs: Sequence[Root], grads: Sequence[Tensor | None],
                batched: bool = False) -> list[Tensor | None]:
    result: list[Tensor | None] = []
    for i, (out, g) in enumerate(zip(outputs, grads, strict=False)):
        # a GradientEdge's output is described by its node's metadata for that input
        meta = out._meta() if isinstance(out, Tensor) else \
            out.node.input_metadata[out.output_nr]
        shape = Size(meta.shape)
        if g is not None:
            first = g[0] if batched else g   # torch compares one batch entry
            if tuple(first.shape) != tuple(shape):
                if batched:
                    # torch prints that entry's shape without its first dim (it strips the
                    # batch dim a second time)
                    raise RuntimeError(messages.batched_grad_shape_mismatch(
                        i, repr(Size(first.shape[1:])), repr(shape)))
                raise RuntimeError(messages.grad_shape_mismatch(i, repr(g.shape), repr(shape)))
            if first.dtype.is_complex != meta.dtype.is_complex:
                raise RuntimeError(messages.grad_complex_mismatch(i, first.dtype, meta.dtype))
            result.append(g)
        elif isinstance(out, GradientEdge) or out.requires_grad:
            if shape.numel() != 1:
                raise RuntimeError(messages.IMPLICIT_GRAD_NON_SCALAR)
            if meta.dtype.is_complex:
                raise RuntimeError(messages.implicit_grad_not_real(meta.dtype))
            result.append(common.new(np.ones(shape), meta.dtype, meta.device))
        else:
            result.append(None)
    return result


def _check_roots(outputs: Sequence[Root]) -> None:
    # run_backward checks each root's gradient edge, not requires_grad: a view made under
    # no_grad requires grad (through its base) but has no edge to start from.
    for i, out in enumerate(outputs):
        if edge_of(out)[0] is None:
            raise RuntimeError(messages.no_grad_fn(i))


def backward(tensors: Tensor | Sequence[Tensor], grad_tensors: Tensor | Sequence[Tensor | None]
             | None = None, retain_graph: bool | None = None, create_graph: bool = False,
             inputs: Tensor | Sequence[Tensor] | None = None) -> None:
    if inputs is not None and not isinstance(inputs, Tensor) and len(inputs) == 0:
        raise RuntimeError(messages.BACKWARD_EMPTY_INPUTS)
    outputs: list[Root] = [t for t in _tuple(tensors) if t is not None]
    given = list(_tuple(grad_tensors)) or [None] * len(outputs)
    grads = _make_grads(outputs, given)
    _check_roots(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warn_once(messages.CREATE_GRAPH_BACKWARD_CYCLE)
    roots = [edge_of(t) for t in outputs]
    targets = [t for t in _tuple(inputs) if t is not None]
    if not targets:
        execute(roots, grads, retain_graph, create_graph)
        return
    # torch (python_engine.cpp run_backward) calls retain_grad() on every input before
    # running: a non-leaf input then gets its .grad from its retains_grad hook, and keeps
    # retains_grad=True afterwards; on a leaf it is a no-op, unless the leaf no longer
    # requires grad (requires_grad_(False)), where it raises.
    # The input's node itself (AccumulateGrad for a leaf) is then marked to execute
    # (GraphTask::init_to_execute with accumulate_grad): a non-leaf input's grad_fn runs, with
    # its hooks, computing no grads past it, and frees its saved tensors.
    for t in targets:
        if isinstance(t, Tensor):
            t.retain_grad()
    execute(roots, grads, retain_graph, create_graph,
            accumulate_into=[edge_of(t) for t in targets])


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
         retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple[Tensor | None, ...]:
    if materialize_grads and allow_unused is False:
        raise ValueError(messages.MATERIALIZE_WITHOUT_ALLOW_UNUSED)
    allow = bool(allow_unused) or materialize_grads
    # torch iterates whatever is not a tensor or an edge: None there is Python's own TypeError
    outs = [outputs] if isinstance(outputs, Tensor | GradientEdge) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor | GradientEdge) else list(inputs)
    if not ins:
        raise RuntimeError(messages.GRAD_EMPTY_INPUTS)
    for t in outs:
        if not isinstance(t, Tensor | GradientEdge):
            raise AssertionError(messages.GRAD_OUTPUT_NOT_TENSOR)
    for t in ins:
        if not isinstance(t, Tensor | GradientEdge):
            raise RuntimeError(messages.grad_input_not_tensor(type(t).__name__))
    given = list(_tuple(grad_outputs)) or [None] * len(outs)
    grads = _make_grads(outs, given, is_grads_batched)
    _check_roots(outs)
    for t in ins:
        if isinstance(t, Tensor) and not t.requires_grad:
            raise RuntimeError(messages.DIFFERENTIATED_NO_GRAD)
    if retain_graph is None:
        retain_graph = create_graph
    roots = [edge_of(t) for t in outs]
    captures = [edge_of(t) for t in ins]
    if is_grads_batched:
        result = _batched_vjp(roots, grads, retain_graph, create_graph, captures)
    else:
        result = execute(roots, grads, retain_graph, create_graph, capture=captures)
    for i, r in enumerate(result):
        if r is None and not allow:
            raise RuntimeError(messages.unused_input(i))
    if materialize_grads:
        if any(r is None and not isinstance(t, Tensor) for t, r in zip(ins, result, strict=True)):
            raise RuntimeError(messages.MATERIALIZE_GRADIENT_EDGE)
        # torch: zeros_like(input, requires_grad=create_graph), so a higher derivative of the
        # materialized zeros can be asked for
        result = [common.zeros_like(t).requires_grad_(create_graph) if r is None else r
                  for t, r in zip(ins, result, strict=True)]
    return tuple(result)


def _batched_vjp(outs: list[Edge], grads: list[Tensor | None], retain_graph: bool,
                 create_graph: bool, ins: list[Edge]) -> list[Tensor | None]:
    """torch vmaps one backward over the first dim of every grad_output; here one backward
    per batch entry (the graph kept until the last), the input grads stacked along dim 0.
    Hooks run once per entry here, once on the batched grads in torch (not modelled: the
    harness cannot observe a hook that receives a batched grad)."""
    size = next(len(g) for g in grads if g is not None)
    per_entry = [execute(outs, [None if g is None else g[b] for g in grads],
                         retain_graph or b < size - 1, create_graph, capture=ins)
                 for b in range(size)]
    result: list[Tensor | None] = []
    for k in range(len(ins)):
        column = [entry[k] for entry in per_entry]
        result.append(None if column[0] is None else joining.stack(column, 0))  # type: ignore[arg-type]
    return result


class Variable:
    """Legacy constructor: today it just returns a leaf (a detached alias of data). It also
    carries the engine's handle, `Variable._execution_engine.queue_callback(cb)`."""

    _execution_engine = ExecutionEngine()

    def __new__(cls, data: Tensor, requires_grad: bool = False) -> Tensor:  # type: ignore[misc]
        out = data.detach()
        out.requires_grad_(requires_grad)
        return out

