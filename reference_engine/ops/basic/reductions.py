"""Reductions: sum, and sum_to (the engine's sum of a broadcast grad); with expand, a view,
because each is the other's backward (mean, prod, var, trace: the families above;
amax/amin, max/min, argmax/argmin: ops/extremes.py). Each entry follows its derivatives.yaml
formula and saved values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import dtypes, messages
from ...autograd_meta import OpSpec, linear_forward, record
from ...dtypes import dtype
from ...grad_mode import is_grad_enabled
from ...tensor import Tensor
from ..common import new, wrap_dim
from . import views
from .view_making import make_view

Dims = int | Sequence[int] | None


def sum_dim(t: Tensor, dim: int) -> Tensor:
    """t.sum(dim, keepdim=True), as the C++ formulas write it."""
    return sum(t, dim, keepdim=True)


def sum_all(t: Tensor) -> Tensor:
    return sum(t)


def reduced_dims(t: Tensor, dim: Dims) -> tuple[int, ...]:
    """An empty or absent dim list reduces every dim (amax's default)."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return tuple(range(t.ndim))
    return reduce_dims(t, dim)


def restore_reduced_dims(g: Tensor, dims: tuple[int, ...], keepdim: bool,
                         ndim: int) -> Tensor:
    """torch's restore_reduced_dims: reshape the reduced grad back to ndim dims."""
    if keepdim:
        return g
    shape = [1] * ndim
    rest = iter(g.shape)
    for i in range(ndim):
        if i not in dims:
            shape[i] = next(rest)
    return views.reshape(g, tuple(shape))


# ---- sum / mean, and sum_to (the engine's reduction of a broadcast grad) -------------------

def sum_backward(c: Any, g: Tensor) -> Tensor:
    if not c.keepdim:
        for d in sorted(c.dim):
            g = views.unsqueeze(g, d)
    return expand(g, c.self_sym_sizes)
SUM0 = OpSpec("SumBackward0", ("self",), backward=lambda c, g: [expand(g, c.self_sym_sizes)],
              jvp="auto_linear")
SUM1 = OpSpec("SumBackward1", ("self",), backward=lambda c, g: [sum_backward(c, g)],
              jvp="auto_linear")


def reduce_dims(t: Tensor, dim: int | Sequence[int]) -> tuple[int, ...]:
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    # a 0-d tensor takes dims -1 and 0 (maybe_wrap_dim wraps as for one dim: 1 raises), and
    # reduces none of its (no) dims
    wrapped = tuple(wrap_dim(d, t.ndim) for d in dims)
    return wrapped if t.ndim else ()


@np.errstate(all="ignore")   # inf + -inf is nan, silently, in torch
def sum_array(a: np.ndarray, dt: dtype, dims: tuple[int, ...] | None = None,
               keepdim: bool = False) -> np.ndarray:
    """ATen's sum accumulates from +0.0: a sum of -0.0s (even of one) is +0.0. numpy
    starts from the first element and keeps -0.0; adding +0.0 turns only -0.0 into +0.0."""
    # np.add.reduce is the call np.sum makes, without np.sum's Python wrapper around it
    total = np.add.reduce(a, axis=dims, dtype=dt.np, keepdims=keepdim)  # type: ignore[call-overload]
    return total + dt.np.type(0)


def _autograd_dtype(self: Tensor, dt: dtype) -> None:
    """A reduction to an integer dtype= of a tensor that requires grad: torch's set_history
    refuses to give such a result a grad_fn (a forward error, under grad mode only)."""
    if not dt.is_differentiable and self.requires_grad and is_grad_enabled():
        raise RuntimeError(messages.autograd_dtype(dt.scalar_name))


def as_dtype(self: Tensor, dt: dtype) -> np.ndarray:
    """The input cast to the result's dtype first, as ATen does when dtype= differs (a
    float summed to int64 sums the truncated values)."""
    return self._data if dt is self.dtype else self._data.astype(dt.np)


@linear_forward(SUM0, SUM1)
def sum(self: Tensor, dim: int | Sequence[int] | None = None,
        keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor:
    dt = dtype or (self.dtype if self.dtype.is_differentiable else dtypes.int64)
    _autograd_dtype(self, dt)
    given = {} if dtype is None else {"dtype": dtype}   # the tangent's sum casts alike
    if dim is None:
        out = new(sum_array(as_dtype(self, dt), dt), dt, self.device)
        return record(SUM0, out, [self], self_sym_sizes=self._data.shape, **given)
    dims = reduce_dims(self, dim)
    out = new(sum_array(as_dtype(self, dt), dt, dims, keepdim), dt, self.device)
    return record(SUM1, out, [self], dim=dims, keepdim=keepdim, self_sym_sizes=self._data.shape,
                  **given)


def sum_to(g: Tensor, shape: Sequence[int]) -> Tensor:
    """at::sum_to: what the engine applies to a broadcast grad (sum keepdim, then view;
    to a 0-dim shape, one plain sum())."""
    if len(shape) == 0:
        return sum(g)
    lead = g.ndim - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape)
                                if s == 1 and g.shape[lead + i] != 1]
    if dims:
        g = sum(g, dims, keepdim=True)
    return views.view(g, tuple(shape)) if lead > 0 else g


# ---- expand: sum's backward, whose own backward is sum_to -------------------------------
# It lives with sum, not with the views (it is one: make_view), because the two formulas call
# each other's op (derivatives.yaml: expand's `at::sum_to(grad, self.sym_sizes())`, sum's
# `grad.expand_symint(...)`): one module, so that no import circle holds them.

EXPAND = OpSpec("ExpandBackward0", ("self",),
                backward=lambda c, g: [sum_to(g, c.self_sym_sizes)])


def expand(self: Tensor, sizes: Sequence[int]) -> Tensor:
    sizes = tuple(sizes)
    lead = len(sizes) - self.ndim
    if lead < 0:  # ATen's inferExpandGeometry
        raise RuntimeError(messages.expand_too_few_sizes(
            dtypes.type_string(self.dtype, self.device), list(self.shape), list(sizes)))
    target: list[int] = []
    for i in reversed(range(len(sizes))):   # from the last dim, as ATen: its error names it
        old = self._data.shape[i - lead] if i >= lead else 1
        new = old if sizes[i] == -1 else sizes[i]
        if i >= lead and old != 1 and old != new:
            raise RuntimeError(messages.expand_size(new, old, i, messages.sizes(sizes),
                                                    messages.sizes(self.shape)))
        target.insert(0, new)
    shape = tuple(target)
    return make_view(self, lambda a: _expand_array(a, shape), EXPAND,
                     self_sym_sizes=self._data.shape)


def _expand_array(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """torch's expand strides (inferExpandGeometry): 0 for size-1 dims that grow and for new
    leading dims of another size than 1; a new leading dim of size 1 strides over the dims
    after it (size times stride of the next dim: ones(3).expand(1, 3) has strides (3, 1));
    a dim that keeps its size keeps its stride (np.broadcast_to zeroes every size-1 dim,
    which changes what matmul's should_fold sees)."""
    lead = len(shape) - a.ndim
    kept = [0 if old == 1 and new != 1 else st
            for old, new, st in zip(a.shape, shape[lead:], a.strides, strict=True)]
    new_dims: list[int] = []
    after = (shape[lead], kept[0]) if kept else (1, 0)   # (a 0-d tensor's new dims: 0)
    for size in reversed(shape[:lead]):
        stride = after[0] * after[1] if size == 1 else 0
        new_dims.insert(0, stride)
        after = (size, stride)
    strides = tuple(new_dims) + tuple(kept)
    if not a.flags.c_contiguous:
        return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=False)
    # the same read-only view of a's memory, made directly on a's buffer (as_strided goes
    # through __array_interface__ in Python: the cost of an expand)
    out = np.ndarray(shape, a.dtype, buffer=a, strides=strides)
    out.flags.writeable = False
    return out
