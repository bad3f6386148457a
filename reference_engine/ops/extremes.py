"""Extremes: amax/amin, max/min (values and indices), argmax/argmin; grads go to the maxima,
shared evenly among ties. And the elementwise maximum/minimum, whose grads go to the input
that won (half to each on a tie)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, out_overloads
from .basic import comparisons, indexing, to_copy, views
from .basic import elementwise as ops
from .basic.comparisons import compare, where
from .basic.elementwise import add, div_scalar, mul, sub
from .basic.reductions import Dims, reduced_dims, restore_reduced_dims, sum
from .basic.to_copy import to
from .common import elementwise_op, new, written_in_place

# ---- amax / amin --------------------------------------------------------------------------

def _amax_backward(c: Any, g: Tensor) -> Tensor:
    """scale_grad_by_count(restore(grad), restore(result) == self, dim)."""
    x = c.self
    res = c.result._data
    if not c.keepdim:
        res = np.expand_dims(res, c.dim) if c.dim else res
    mask = x._data == res
    count = common.new(mask.sum(axis=c.dim, keepdims=True), dtypes.int64, x.device)
    g = restore_reduced_dims(g, c.dim, c.keepdim, x.ndim)
    return ops.mul(ops.div(g, count), common.new(mask, dtypes.bool_, x.device))
def evenly_read_tangent(x: Tensor, x_t: Tensor, result: Tensor, dims: tuple[int, ...] | None,
                        keepdim: bool) -> Tensor:
    """amaxamin_jvp / evenly_read_jvp: the mean of the tangent over the elements that equal
    the result, (self_t * mask).sum(dims) / mask.sum(dims)."""
    if dims is None:
        mask = to_copy.to(comparisons.compare(x, result, np.equal), x_t.dtype)
        return ops.div(sum(ops.mul(x_t, mask)), sum(mask))
    r = restore_reduced_dims(result, dims, keepdim, x.ndim)
    mask = to_copy.to(comparisons.compare(x, r, np.equal), x_t.dtype)
    return ops.div(sum(ops.mul(x_t, mask), dims, keepdim), sum(mask, dims, keepdim))


AMAX = OpSpec("AmaxBackward0", ("self",), {"self": ("self", "result")},
              lambda c, g: [_amax_backward(c, g)],
              jvp=lambda c: evenly_read_tangent(c.self, c.self_t, c.result, c.dim, c.keepdim))
AMIN = OpSpec("AminBackward0", ("self",), {"self": ("self", "result")},
              lambda c, g: [_amax_backward(c, g)],
              jvp=lambda c: evenly_read_tangent(c.self, c.self_t, c.result, c.dim, c.keepdim))


def first_extreme(a: np.ndarray, dims: tuple[int, ...], keepdim: bool,
                  largest: bool) -> np.ndarray:
    """amax/amin as ATen's scalar reduction loop computes them: max_impl(acc, x) keeps the
    accumulator on ties and propagates NaN, so of equal values (-0.0 and 0.0) the first one
    visited wins. The loop visits the reduced elements in memory order (TensorIterator puts
    the smallest stride innermost). Where a reduction is long enough for the vectorized loop
    (four SIMD vectors of contiguous elements or outputs, CPU-dependent) torch's tie-breaking
    differs; that is not modelled."""
    keep = [d for d in range(a.ndim) if d not in dims]
    order = sorted(dims, key=lambda d: -a.strides[d])   # stable: outermost first
    # the reduced length spelled out: with a kept dim of size 0, -1 would be ambiguous
    n = int(np.prod([a.shape[d] for d in order], dtype=np.int64))
    moved = np.transpose(a, keep + order).reshape([a.shape[d] for d in keep] + [n])
    pick = (np.argmax if largest else np.argmin)(moved, axis=-1)   # first max, or first NaN
    out = np.take_along_axis(moved, pick[..., None], -1)[..., 0]
    return np.expand_dims(out, dims) if keepdim else out


def _extreme(spec: OpSpec, largest: bool, self: Tensor, dim: Dims, keepdim: bool,
             out: Tensor | None = None) -> Tensor:
    name = "amax" if largest else "amin"
    if out is not None and out.dtype is not self.dtype:
        raise RuntimeError(messages.out_dtype_match(self.dtype.scalar_name,
                                                    out.dtype.scalar_name))
    dims = reduced_dims(self, dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(messages.dim_repeated(next(d for d in dims if dims.count(d) > 1)))
    if self.numel() == 0:
        if dim is None or (not isinstance(dim, int) and len(dim) == 0):
            raise RuntimeError(messages.reduction_dim_unspecified(name + "()"))
        # zero_numel_check_dims over the dims as given: its text names -1, not 1
        given = [dim] if isinstance(dim, int) else list(dim)
        empty = [g for g, d in zip(given, dims, strict=True) if self.shape[d] == 0]
        if empty:
            raise IndexError(messages.reduction_dim_empty(name + "()", empty[0]))
    if self.dtype.is_complex:   # max_values / min_values are dispatched for real types only
        raise NotImplementedError(messages.kernel_not_implemented(
            "max_values_cpu" if largest else "min_values_cpu", self.dtype.scalar_name))
    if out is not None:
        return out_overloads.into_out(name, out, [self],
                                      lambda: _extreme(spec, largest, self, dim, keepdim))
    out = common.new(first_extreme(self._data, dims, keepdim, largest), self.dtype, self.device)
    return record(spec, out, [self], dim=dims, keepdim=keepdim)


def amax(self: Tensor, dim: Dims = (), keepdim: bool = False, *,
         out: Tensor | None = None) -> Tensor:
    return _extreme(AMAX, True, self, dim, keepdim, out)


def amin(self: Tensor, dim: Dims = (), keepdim: bool = False, *,
         out: Tensor | None = None) -> Tensor:
    return _extreme(AMIN, False, self, dim, keepdim, out)


# ---- max / min ----------------------------------------------------------------------------

class return_types(tuple[Tensor, Tensor]):
    """torch.return_types.max / min: a (values, indices) tuple with named fields."""

    @property
    def values(self) -> Tensor:
        return self[0]

    @property
    def indices(self) -> Tensor:
        return self[1]


# type(torch.max(x, 0)).__name__ is "max" (torch.return_types.max); likewise "min".
max_return_type = type("max", (return_types,), {})
min_return_type = type("min", (return_types,), {})


def evenly_distribute(c: Any, g: Tensor) -> Tensor:
    """new_zeros(...).masked_fill_(mask, grad / mask.sum()) - on CPU, as torch. A NaN
    result (NaN propagates through min/max) is shared by every NaN element: the mask is then
    input.isnan(), so an all-NaN input gets an even share everywhere."""
    x = c.self
    value = c.result._data
    mask = np.isnan(x._data) if np.isnan(value) else x._data == value
    count = common.new(mask.sum(), dtypes.int64, x.device)
    zeros = common.new(np.zeros(x.shape), g.dtype, g.device)
    where = common.new(mask, dtypes.bool_, x.device)
    filled = indexing.masked_fill(zeros, where, ops.div(g, count))
    return common.written_in_place(filled)


def select_backward(c: Any, g: Tensor) -> Tensor:
    """value_selecting_reduction_backward: zeros(sizes).scatter(dim, indices, grad)."""
    idx = c.indices
    if not c.keepdim and len(c.self_sym_sizes) > 0:
        g = views.unsqueeze(g, c.dim)
        idx = views.unsqueeze(idx, c.dim)
    zeros = common.new(np.zeros(c.self_sym_sizes), g.dtype, g.device)
    return common.written_in_place(indexing.scatter(zeros, c.dim, idx, g), 2)
def select_jvp(c: Any) -> Tensor:
    """gather_with_keepdimed_indices(self_t, dim, indices, keepdim): a gather, squeezed (a
    view of it) unless keepdim; of a 0-d self too (the gather of its unsqueezed 0-d indices
    has one element, so the tangent is a 0-d view, as torch's)."""
    idx = c.indices if c.keepdim else views.unsqueeze(c.indices, c.dim)
    out = indexing.gather(c.self_t, c.dim, idx)
    return out if c.keepdim else views.squeeze(out, c.dim)


MAX0 = OpSpec("MaxBackward0", ("self",), {"self": ("indices",)},
              lambda c, g: [select_backward(c, g)], jvp=select_jvp)
MIN0 = OpSpec("MinBackward0", ("self",), {"self": ("indices",)},
              lambda c, g: [select_backward(c, g)], jvp=select_jvp)
MAX1 = OpSpec("MaxBackward1", ("self",), {"self": ("self", "result")},
              lambda c, g: [evenly_distribute(c, g)],
              jvp=lambda c: evenly_read_tangent(c.self, c.self_t, c.result, None, False))
MIN1 = OpSpec("MinBackward1", ("self",), {"self": ("self", "result")},
              lambda c, g: [evenly_distribute(c, g)],
              jvp=lambda c: evenly_read_tangent(c.self, c.self_t, c.result, None, False))


def _extreme_of_all(a: np.ndarray, largest: bool) -> np.ndarray:
    """max()/min() of every element. Only a tie of +0 and -0 needs more than np.max, whose
    SIMD kernel picks either sign by CPU: ATen's max_all/min_all fold element i into
    accumulator i % 4 (float64; 8 for float32), a tie keeping the later element, then fold
    the accumulators in order, again keeping the later on a tie (measured against torch
    2.13 on 8,000 random arrays of +-0 and +-1, +-2, lengths 1-120: float64 all agree,
    float32 all but 2)."""
    fn = np.max if largest else np.min
    m = fn(a)
    if a.dtype.kind != "f" or m != 0:
        return np.asarray(m)
    flat = a.reshape(-1)
    lanes = 4 if a.dtype == np.float64 else 8
    result = m
    for j in range(lanes):   # (an accumulator past the last element holds nothing)
        column = flat[j::lanes]
        ties = np.nonzero(column == m)[0]   # +0 == -0
        if ties.size:   # this accumulator ends at m; a later accumulator wins the tie
            result = column[ties[-1]]
    return np.asarray(result)


def _max_min(self: Tensor, dim: Any, keepdim: bool, largest: bool) -> Any:
    if isinstance(dim, Tensor):   # torch.max(a, b) is maximum(a, b)
        return maximum(self, dim) if largest else minimum(self, dim)
    if self.dtype.is_complex:   # no ordering of complex numbers: ATen's texts
        name = "max" if largest else "min"
        if dim is None:
            raise NotImplementedError(messages.kernel_not_implemented(f"{name}_all",
                                                                   self.dtype.scalar_name))
        raise RuntimeError(messages.max_min_complex(name))
    name = "max()" if largest else "min()"
    if dim is None:
        if self.numel() == 0:   # TensorCompare.cpp max()/min() of every element
            raise RuntimeError(messages.reduction_dim_unspecified(name))
        out = common.new(_extreme_of_all(self._data, largest), self.dtype, self.device)
        return record(MAX1 if largest else MIN1, out, [self])
    d = common.wrap_dim(dim, self.ndim)
    if self.ndim and self.shape[d] == 0:   # zero_numel_check_dims, the wrapped dim
        raise IndexError(messages.reduction_dim_empty(name, d))
    arg = np.argmax if largest else np.argmin
    idx = np.expand_dims(arg(self._data, axis=d), d) if self.ndim else np.zeros((), np.int64)
    values = np.take_along_axis(self._data, idx, d) if self.ndim else self._data
    if not keepdim and self.ndim:
        values, idx = np.squeeze(values, d), np.squeeze(idx, d)
    indices = common.new(idx, dtypes.int64, self.device)
    out = common.new(values, self.dtype, self.device)
    out = record(MAX0 if largest else MIN0, out, [self], dim=d, keepdim=keepdim,
                 indices=indices, self_sym_sizes=tuple(self.shape))
    return (max_return_type if largest else min_return_type)((out, indices))


def max(self: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    return _max_min(self, dim, keepdim, largest=True)


def min(self: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    return _max_min(self, dim, keepdim, largest=False)


# ---- argmax / argmin: integer results, never differentiable ------------------------------

def _arg_extreme(self: Tensor, dim: int | None, keepdim: bool, largest: bool) -> Tensor:
    """The index of the first largest (smallest) element; a NaN counts as the extreme, as
    in torch (and numpy). Without dim, over the flattened tensor."""
    if self.dtype is dtypes.bool_:   # ReduceOps.cpp argmax/argmin_out check
        raise RuntimeError(messages.arg_extreme_bool("argmax" if largest else "argmin"))
    pick = np.argmax if largest else np.argmin
    name = "argmax()" if largest else "argmin()"
    if dim is None:
        if self.numel() == 0:
            raise IndexError(messages.arg_extreme_of_empty(name))
        idx = np.asarray(pick(self._data.reshape(-1)), dtype=np.int64)
        if keepdim:
            idx = idx.reshape((1,) * self.ndim)
        return common.new(idx, dtypes.int64, self.device)
    d = common.wrap_dim(dim, self.ndim)
    if self.ndim and self.shape[d] == 0:
        raise IndexError(messages.reduction_dim_empty(name, d))
    data = self._data.reshape(1) if self.ndim == 0 else self._data
    idx = np.asarray(pick(data, axis=d if self.ndim else 0), dtype=np.int64)
    if keepdim and self.ndim:
        idx = np.expand_dims(idx, d)
    return common.new(idx, dtypes.int64, self.device)


def argmax(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg_extreme(self, dim, keepdim, largest=True)


def argmin(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg_extreme(self, dim, keepdim, largest=False)


# ---- maximum / minimum ----------------------------------------------------------------------

def _max_backward(c: Any, g: Tensor, keep: Callable[..., Any]) -> Tensor:
    """at::where(self == other, grad / 2, grad).masked_fill_(<loses>, 0)."""
    x, y = c.self, c.other
    halved = where(compare(x, y, np.equal), div_scalar(g, 2), g)
    return written_in_place(indexing.masked_fill(halved, compare(x, y, keep), 0))


MAXIMUM = OpSpec("MaximumBackward0", ("self", "other"),
                 {"self": ("self", "other"), "other": ("self", "other")},
                 lambda c, g: c.grads(lambda: _max_backward(c, g, np.less),
                                      lambda: _max_backward(c, g, np.greater)),
                 jvp=lambda c: _max_jvp(c, np.greater))
MINIMUM = OpSpec("MinimumBackward0", ("self", "other"),
                 {"self": ("self", "other"), "other": ("self", "other")},
                 lambda c, g: c.grads(lambda: _max_backward(c, g, np.greater),
                                      lambda: _max_backward(c, g, np.less)),
                 jvp=lambda c: _max_jvp(c, np.less))


def _max_jvp(c: Any, wins: Callable[..., Any]) -> Tensor:
    """other_t + where(self == other, 0.5, wins(self, other)) * (self_t - other_t)"""
    dt = c.result.dtype
    share = where(compare(c.self, c.other, np.equal), new(0.5, dt, c.result.device),
                  to(compare(c.self, c.other, wins), dt))
    return add(c.other_t, mul(share, sub(c.self_t, c.other_t)))


def _keep_first(pick: Callable[..., Any]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """ATen's scalar maximum/minimum: NaN if either is NaN, else std::max(a, b), which keeps
    the first operand on ties (maximum(-0., 0.) is -0.). torch's vectorized loop (whole
    SIMD vectors of contiguous elements, 16 float32 / 8 float64 with AVX512) takes the second
    operand on ties instead; that CPU-dependent path is not modelled."""
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_arrays(a, b)
        return np.where(np.isnan(a) | np.isnan(b), a + b, np.where(pick(b, a), b, a))
    return fn


def maximum(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_op(MAXIMUM, _keep_first(np.greater), (self, other))


def minimum(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_op(MINIMUM, _keep_first(np.less), (self, other))
