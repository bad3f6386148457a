"""torch.autograd's entry points: backward, grad, Variable, Function."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from . import function, messages
from .engine import execute, gradient_edge
from .function import Function, FunctionCtx
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .tensor import Tensor

__all__ = ["Function", "FunctionCtx", "Variable", "backward", "enable_grad", "function", "grad",
           "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "no_grad",
           "set_grad_enabled"]

_warned = {"create_graph": False}


def _tuple(x: Tensor | Sequence[Tensor | None] | None) -> tuple[Tensor | None, ...]:
    if x is None:
        return ()
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _make_grads(outputs: Sequence[Tensor], grads: Sequence[Tensor | None]
                ) -> list[Tensor | None]:
    from .ops import new
    result: list[Tensor | None] = []
    for i, (out, g) in enumerate(zip(outputs, grads, strict=False)):
        if g is not None:
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(messages.grad_shape_mismatch(i, repr(g.shape), repr(out.shape)))
            result.append(g)
        elif out.requires_grad:
            if out.numel() != 1:
                raise RuntimeError(messages.IMPLICIT_GRAD_NON_SCALAR)
            result.append(new(np.ones(out.shape), out.dtype, out.device))
        else:
            result.append(None)
    return result


def _check_roots(outputs: Sequence[Tensor]) -> None:
    # run_backward checks each root's gradient edge, not requires_grad: a view made under
    # no_grad requires grad (through its base) but has no edge to start from.
    for i, out in enumerate(outputs):
        if gradient_edge(out)[0] is None:
            raise RuntimeError(messages.no_grad_fn(i))


def backward(tensors: Tensor | Sequence[Tensor], grad_tensors: Tensor | Sequence[Tensor | None]
             | None = None, retain_graph: bool | None = None, create_graph: bool = False,
             inputs: Tensor | Sequence[Tensor] | None = None) -> None:
    if inputs is not None and not isinstance(inputs, Tensor) and len(inputs) == 0:
        raise RuntimeError(messages.BACKWARD_EMPTY_INPUTS)
    outputs = [t for t in _tuple(tensors) if t is not None]
    given = list(_tuple(grad_tensors)) or [None] * len(outputs)
    grads = _make_grads(outputs, given)
    _check_roots(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and not _warned["create_graph"]:
        _warned["create_graph"] = True    # torch uses TORCH_WARN_ONCE: once per process
        warnings.warn(messages.CREATE_GRAPH_BACKWARD_CYCLE, UserWarning, stacklevel=2)
    targets = [t for t in _tuple(inputs) if t is not None]
    if not targets:
        execute(outputs, grads, retain_graph, create_graph)
        return
    # torch (python_engine.cpp run_backward) calls retain_grad() on every input before
    # running: a non-leaf input then gets its .grad from its retains_grad hook, and keeps
    # retains_grad=True afterwards; on a leaf it is a no-op, unless the leaf no longer
    # requires grad (requires_grad_(False)), where it raises.
    for t in targets:
        t.retain_grad()
    leaves = [t for t in targets if t.is_leaf]
    others = [t for t in targets if not t.is_leaf]
    execute(outputs, grads, retain_graph, create_graph, capture=others or None,
            accumulate_into=leaves)


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
         retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple[Tensor | None, ...]:
    if materialize_grads and allow_unused is False:
        raise ValueError(messages.MATERIALIZE_WITHOUT_ALLOW_UNUSED)
    allow = bool(allow_unused) or materialize_grads
    # torch iterates whatever is not a tensor: None there is Python's own TypeError
    outs = list(outputs) if not isinstance(outputs, Tensor) else [outputs]
    ins = list(inputs) if not isinstance(inputs, Tensor) else [inputs]
    if not ins:
        raise RuntimeError(messages.GRAD_EMPTY_INPUTS)
    for t in outs:
        if not isinstance(t, Tensor):
            raise AssertionError(messages.GRAD_OUTPUT_NOT_TENSOR)
    for t in ins:
        if not isinstance(t, Tensor):
            raise RuntimeError(messages.grad_input_not_tensor(type(t).__name__))
    given = list(_tuple(grad_outputs)) or [None] * len(outs)
    grads = _make_grads(outs, given)
    _check_roots(outs)
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError(messages.DIFFERENTIATED_NO_GRAD)
    if retain_graph is None:
        retain_graph = create_graph
    result = execute(outs, grads, retain_graph, create_graph, capture=ins)
    for i, r in enumerate(result):
        if r is None and not allow:
            raise RuntimeError(messages.unused_input(i))
    if materialize_grads:
        from .ops import zeros_like
        result = [zeros_like(t) if r is None else r for t, r in zip(ins, result, strict=False)]
    return tuple(result)


def Variable(data: Tensor, requires_grad: bool = False) -> Tensor:
    """Legacy constructor: today it just returns a leaf (a detached alias of data)."""
    out = data.detach()
    out.requires_grad_(requires_grad)
    return out

