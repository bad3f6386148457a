"""Scans along one dim: cumsum, cumprod, cummax/cummin, logcumsumexp. Each backward is its
derivatives.yaml formula (FunctionsManual.cpp), written in engine ops so that create_graph
differentiates it again."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..autograd_meta import OpSpec, linear_forward, record
from ..dtypes import dtype
from ..tensor import Tensor
from . import common, extremes
from . import unary_via_backward as ub  # abs, tanh, sigmoid, relu
from .basic import comparisons, copying, indexing, to_copy
from .basic import elementwise as ops


def wrapped_dim(self: Tensor, dim: int) -> int:
    return common.wrap_dim(dim, self.ndim)


def along_dim(a: np.ndarray, d: int, fn: Any) -> np.ndarray:
    """fn applied to `a` with dim d moved last (a 0-d tensor as a 1-element line)."""
    if a.ndim == 0:
        return np.asarray(fn(a.reshape(1)).reshape(()))
    return np.moveaxis(fn(np.moveaxis(a, d, -1)), -1, d)


def _from_zero(arr: np.ndarray) -> np.ndarray:
    """ATen's cumsum and logcumsumexp kernels start their accumulator at +0 (-inf) and add
    each element to it, so a leading -0.0 comes out +0.0 (numpy's scans start from the first
    element); a 0-d input is copied, its -0.0 kept. Adding +0.0 changes only the -0.0s (an
    integral result has none, and keeps its dtype)."""
    return arr if arr.ndim == 0 or arr.dtype.kind not in "fc" else arr + 0.0


# ---- flip (private: reversed_cumsum's flips, so a double backward is FlipBackward0) ------

FLIP = OpSpec("FlipBackward0", ("self",), backward=lambda c, g: [flip_dim(g, c.dim)],
              jvp=lambda c: flip_dim(c.self_t, c.dim))


def flip_dim(self: Tensor, dim: int) -> Tensor:
    out = common.new(np.flip(self._data, dim) if self.ndim else self._data, self.dtype,
                     self.device)
    return record(FLIP, out, [self], dim=dim)


def reversed_cumsum(w: Tensor, dim: int) -> Tensor:
    """w.flip(dim).cumsum(dim).flip(dim)"""
    return flip_dim(cumsum(flip_dim(w, dim), dim), dim)


# ---- cumsum -------------------------------------------------------------------------------

def _cumsum_backward(c: Any, g: Tensor) -> Tensor:
    """cumsum_backward(grad.to(self.scalar_type()), dim)"""
    g = to_copy.to(g, c.self_dtype) if g.dtype != c.self_dtype else g
    if g.numel() <= 1 or g.ndim == 0 or g.shape[c.dim] == 1:
        return g
    return reversed_cumsum(g, c.dim)


CUMSUM = OpSpec("CumsumBackward0", ("self",), backward=lambda c, g: [_cumsum_backward(c, g)],
                jvp="auto_linear")


def out_dtype(self: Tensor, dt: dtype | None) -> dtype:
    """cumsum/cumprod: an integral (or bool) input accumulates in int64 unless dtype= says."""
    if dt is not None:
        return dt
    return self.dtype if self.dtype.is_differentiable else dtypes.int64


@linear_forward(CUMSUM)
def cumsum(self: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
    d = wrapped_dim(self, dim)
    dt = out_dtype(self, dtype)
    # ATen's CPU kernel accumulates in acc_type (double for float), front to back
    acc = np.float64 if dt.is_floating_point else dt.np
    arr = common.compute_on(lambda a: _from_zero(along_dim(a.astype(acc), d,
                                                           lambda x: np.cumsum(x, -1))), self._data)
    return record(CUMSUM, common.new(arr, dt, self.device), [self], dim=d,
                  self_dtype=self.dtype)


# ---- cummax / cummin ----------------------------------------------------------------------

cummax_return_type = type("cummax", (extremes.return_types,), {})
cummin_return_type = type("cummin", (extremes.return_types,), {})


def _cum_extreme(line: np.ndarray, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """ATen's cummax_cummin_helper along the last dim: an element replaces the running one
    if it is NaN, or if the running one is not NaN and it is >= (cummin: <=) it; so a tie
    takes the later index and a NaN sticks until the next NaN."""
    values = np.empty_like(line)
    idx = np.zeros(line.shape, np.int64)
    best = line[..., 0].copy()
    where = np.zeros(line.shape[:-1], np.int64)
    for i in range(line.shape[-1]):
        cur = line[..., i]
        better = cur >= best if largest else cur <= best
        take = np.isnan(cur) | (~np.isnan(best) & better)
        best = np.where(take, cur, best)
        where = np.where(take, i, where)
        values[..., i], idx[..., i] = best, where
    return values, idx


def _cummaxmin_backward(c: Any, g: Tensor) -> Tensor:
    """cummaxmin_backward: zeros(self).scatter_add_(dim, indices, grad)."""
    x = c.self
    if x.numel() == 0:
        return x
    zeros = common.new(np.zeros(x.shape), x.dtype, x.device)
    if x.ndim == 0:
        return common.written_in_place(ops.add(zeros, g))
    return common.written_in_place(indexing.scatter_add(zeros, c.dim, c.indices, g))


def _cummaxmin_jvp(c: Any) -> Tensor:
    """self_t.gather(dim, indices)"""
    if c.self.ndim == 0:
        return copying.clone(c.self_t)
    return indexing.gather(c.self_t, c.dim, c.indices)


CUMMAX = OpSpec("CummaxBackward0", ("self",), {"self": ("self", "indices")},
                lambda c, g: [_cummaxmin_backward(c, g)], jvp=_cummaxmin_jvp,
                saved_outputs=("indices",))
CUMMIN = OpSpec("CumminBackward0", ("self",), {"self": ("self", "indices")},
                lambda c, g: [_cummaxmin_backward(c, g)], jvp=_cummaxmin_jvp,
                saved_outputs=("indices",))


def _cummaxmin(self: Tensor, dim: int, largest: bool) -> Any:
    d = wrapped_dim(self, dim)
    if self.numel() == 0:
        values, idx = self._data.copy(), np.zeros(self.shape, np.int64)
    elif self.ndim == 0:
        values, idx = self._data.copy(), np.zeros((), np.int64)
    else:
        v, i = _cum_extreme(np.moveaxis(self._data, d, -1), largest)
        values, idx = np.moveaxis(v, -1, d), np.moveaxis(i, -1, d)
    indices = common.new(idx, dtypes.int64, self.device)
    out = record(CUMMAX if largest else CUMMIN, common.new(values, self.dtype, self.device),
                 [self], dim=d, indices=indices)
    return (cummax_return_type if largest else cummin_return_type)((out, indices))


def cummax(self: Tensor, dim: int) -> Any:
    return _cummaxmin(self, dim, True)


def cummin(self: Tensor, dim: int) -> Any:
    return _cummaxmin(self, dim, False)


# ---- logcumsumexp -------------------------------------------------------------------------

def _logcumsumexp_backward(c: Any, g: Tensor) -> Tensor:
    """FunctionsManual logcumsumexp_backward (real inputs): the positive and the negative
    parts of grad, each through a reversed logcumsumexp in log space, then exp'd."""
    if g.ndim == 0 or g.numel() == 0:
        return g
    x, result, d = c.self, c.result, c.dim
    lowest = common.new(np.finfo(g.dtype.np).min, g.dtype, g.device)
    log_abs = ops.log(ub.abs(g))
    pos = comparisons.where(comparisons.compare(g, 0, np.greater), log_abs, lowest)
    neg = comparisons.where(comparisons.compare(g, 0, np.less), log_abs, lowest)

    def reverse(t: Tensor) -> Tensor:
        return flip_dim(logcumsumexp(flip_dim(t, d), d), d)
    out_pos = ops.exp(ops.add(reverse(ops.sub(pos, result)), x))
    out_neg = ops.exp(ops.add(reverse(ops.sub(neg, result)), x))
    return ops.sub(out_pos, out_neg)


def _logcumsumexp_jvp(c: Any) -> Tensor:
    """logcumsumexp_jvp: (exp(self - max) * self_t).cumsum(dim) / (exp(self - max).cumsum
    + 1e-13), max over dim keeping it; torch divides in place (`cumsumexp_t /= ...`), so
    the tangent it returns is at version 1."""
    x, d = c.self, c.dim
    top = extremes.amax(x, d, True) if x.ndim else x
    e = ops.exp(ops.sub(x, top))
    return common.written_in_place(
        ops.div(cumsum(ops.mul(e, c.self_t), d), ops.add_scalar(cumsum(e, d), 1e-13)))


LOGCUMSUMEXP = OpSpec("LogcumsumexpBackward0", ("self",), {"self": ("self", "result")},
                      lambda c, g: [_logcumsumexp_backward(c, g)], jvp=_logcumsumexp_jvp)


def logcumsumexp(self: Tensor, dim: int) -> Tensor:
    d = wrapped_dim(self, dim)
    common.floating_kernel("logcumsumexp_out_cpu", self)
    dt = common.float_dtype(self)
    arr = common.compute_on(lambda a: _from_zero(along_dim(
        a.astype(np.float64), d, lambda x: np.logaddexp.accumulate(x, -1))), self._data)
    return record(LOGCUMSUMEXP, common.new(arr, dt, self.device), [self], dim=d)


