"""How a custom Function's outputs join its node: torch/csrc/autograd/custom_function.cpp's
_wrap_outputs, called by Function.apply (function.py) once forward has run. An input
returned as-is comes back as a view of itself carrying the node; an input marked dirty keeps
its identity and has its history rebased; a view returned from forward is marked so that it
may not be modified in place later; a non-differentiable output gets no history.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from . import messages
from .graph import Meta
from .ops.basic.inplace import check_inplace, rebase_history
from .ops.creation_meta import IN_CUSTOM_FUNCTION, MULTI_OUTPUT_NODE
from .tensor import Tensor

if TYPE_CHECKING:
    from .function import BackwardCFunction


def wrap_outputs(node: BackwardCFunction | None, ctx: BackwardCFunction, inputs: list[Tensor],
                 raw: tuple[Any, ...]) -> tuple[Any, ...]:
    dirty = ctx._dirty
    for t in dirty:                     # _mark_dirty: every dirty tensor's version is bumped
        t._version_counter.bump()
    outs: list[Any] = []
    diff_outputs = 0
    for i, var in enumerate(raw):
        if not isinstance(var, Tensor):
            ctx._output_info.append(None)
            if node is not None:
                node.input_metadata.append(UNDEFINED_INPUT)
            outs.append(var)
            continue
        is_input = any(var is t for t in inputs)
        is_modified = any(var is t for t in dirty)
        differentiable = node is not None and var.dtype.is_differentiable \
            and not any(var is t for t in ctx._non_differentiable)
        ctx._output_info.append(var._meta())
        if node is not None:
            node.input_metadata.append(var._meta())
        if not differentiable:
            if not var.requires_grad:
                if is_input and not is_modified:
                    var = _view_as_self(var)
            elif is_input:
                var = var.detach()
            elif var._base is None:
                var.detach_()
        elif is_modified:
            if not is_input:
                if var._base is not None:
                    raise RuntimeError(messages.MARK_DIRTY_NOT_INPUT)
                warnings.warn(messages.MARK_DIRTY_NOT_INPUT, UserWarning, stacklevel=2)
            if var._base is not None:    # a dirty view is checked as any in-place on a view
                check_inplace(var)
            # C++ is_leaf() reads the grad_fn_ field: the check must not regenerate a dirty
            # view's grad_fn against its base's history from before the rebase.
            if var._grad_fn is None and var.requires_grad:
                raise RuntimeError(messages.MARK_DIRTY_LEAF)
            if var._base is not None and len(raw) > 1:
                raise RuntimeError(messages.MARK_DIRTY_VIEW_MULTIPLE_OUTPUTS)
            var._grad = None
            if var._base is not None:
                rebase_history(var, node)  # type: ignore[arg-type]
            else:
                var._set_grad_fn(node, i)  # type: ignore[arg-type]
        elif is_input:
            var = _view_as_self(var)
            var._set_grad_fn(node, i)  # type: ignore[arg-type]
        else:
            var._set_grad_fn(node, i)  # type: ignore[arg-type]
        if not (is_input and is_modified) and var._base is not None:
            var._view_creation_meta = IN_CUSTOM_FUNCTION
        diff_outputs += differentiable
        outs.append(var)
    if any(not any(t is o for o in outs) for t in dirty):
        raise RuntimeError(messages.MARK_DIRTY_NOT_RETURNED)
    if diff_outputs > 1:
        for var in outs:
            if isinstance(var, Tensor) and var._base is not None:
                var._view_creation_meta = MULTI_OUTPUT_NODE
    return tuple(outs)


def _view_as_self(t: Tensor) -> Tensor:
    """An alias of t that is a view of t's base (torch's view_as(self) under no_grad)."""
    base = t._base if t._base is not None else t
    out = Tensor(t._data[...], t.dtype, t.device)
    out._base = base
    out._version_counter = base._version_counter
    out._view_index = t._view_index if t._view_index is not None \
        else np.arange(base.numel()).reshape(base.shape)
    out._view_version = base._version_counter.value
    out._view_differentiable = True
    return out


# Node::undefined_input(): the metadata slot of an output that is not a tensor.
UNDEFINED_INPUT = Meta((), None, None)  # type: ignore[arg-type]
