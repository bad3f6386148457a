"""quantile and nanquantile: ATen's composite (Sorting.cpp quantile_impl), op for op, so the
graph, the in-place steps (lerp_, unsqueeze_/transpose_/squeeze_) and the versions are
torch's: sort the reduced dim last, turn q into ranks, gather the values below and above and
lerp_ between them. q's gradient flows only through the lerp weights (ranks - ranks_below)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes, messages, views_inplace
from ..autograd_meta import OpSpec, record
from ..grad_mode import no_grad
from ..tensor import Tensor
from . import common, fma
from .basic import elementwise as ops
from .basic import indexing, inplace, reductions, views
from .sorting import sort

INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


# ---- lerp_ (lerp.Tensor's formulas), the in-place step quantile takes --------------------

LERP1 = OpSpec(
    "LerpBackward1", ("self", "end", "weight"),
    {"self": ("weight",), "end": ("weight",), "weight": ("self", "end")},
    lambda c, g: c.grads(lambda: ops.mul(g, ops.rsub(c.weight, 1)),
                         lambda: ops.mul(g, c.weight),
                         lambda: ops.mul(g, ops.sub(c.end, c.self))),
    jvp=lambda c: ops.add(_lerp(c.self_t, c.end_t, c.weight),
                          ops.mul(c.weight_t, ops.sub(c.end, c.self))))


def _lerp(self: Tensor, end: Tensor, weight: Tensor) -> Tensor:
    arr = common.compute_on(fma.lerp, self._data, end._data, weight._data.astype(self.dtype.np))
    return record(LERP1, common.new(arr, self.dtype, self.device), [self, end, weight])


def _lerp_(self: Tensor, end: Tensor, weight: Tensor) -> Tensor:
    with no_grad():   # the values, and the tangent forward mode gives self (if any)
        result = _lerp(self, end, weight)
    return inplace.apply_inplace(self, LERP1, result, [end, weight])


# ---- quantile / nanquantile ---------------------------------------------------------------

def _checks(self: Tensor, q: Any) -> Tensor:
    """The checks of quantile_impl; a float q becomes scalar_tensor(q, self.options())."""
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(messages.quantile_q_range(q))
        q = common.new(np.asarray(q), self.dtype, self.device)
    if self.numel() == 0:
        raise RuntimeError(messages.QUANTILE_EMPTY)
    if q.ndim > 1:
        raise RuntimeError(messages.QUANTILE_Q_DIMS)
    if self.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(messages.QUANTILE_DTYPE)
    if q.dtype is not self.dtype:
        raise RuntimeError(messages.QUANTILE_Q_DTYPE)
    if not np.all((q._data >= 0) & (q._data <= 1)):
        raise RuntimeError(messages.QUANTILE_Q_VALUES)
    return q


def _quantile(self: Tensor, q: Any, dim: int | None, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:
    if interpolation not in INTERPOLATIONS:
        raise RuntimeError(messages.quantile_interpolation(interpolation))
    q = _checks(self, q)
    d = common.wrap_dim(0 if dim is None else dim, self.ndim)
    out_shape: list[int] = []
    if dim is not None and self.ndim > 0:
        out_shape = list(self.shape)
        if keepdim:
            out_shape[d] = 1
        else:
            del out_shape[d]
    elif keepdim:
        out_shape = [1] * self.ndim
    if q.ndim > 0:
        out_shape.insert(0, q.numel())

    # the reduced dim last, sorted
    if dim is None:
        reduced = views.flatten(self)
    elif d == self.ndim - 1:
        reduced = self
    else:
        reduced = views.transpose(views.unsqueeze(self, -1), d, -1)
    sorted_values = sort(reduced)[0]
    if q.ndim == 0:
        out_shape.insert(0, q.numel())
    in_shape = [*out_shape[1:], sorted_values.shape[-1]]
    sorted_values = views.view(sorted_values, tuple(in_shape))

    # q to ranks in [0, n): NaN rows rank last (quantile) or count only their numbers
    nan = np.isnan(sorted_values._data)
    if ignore_nan:
        count = common.new(np.sum(~nan, -1, keepdims=True), dtypes.int64, self.device)
        ranks = ops.mul(q, ops.sub_scalar(count, 1))
        ranks = inplace.masked_fill_(ranks, common.new(ranks._data < 0, dtypes.bool_,
                                                       self.device), 0)
    else:
        last = sorted_values.shape[-1] - 1
        scaled = ops.mul_scalar(q, last)
        any_nan = nan.any(-1, keepdims=True)
        shape = np.broadcast_shapes(scaled.shape, any_nan.shape)
        if tuple(scaled.shape) != shape:
            scaled = reductions.expand(scaled, shape)
        # broadcast_tensors: the mask is an expand of any(-1, keepdim) (a view, saved)
        mask = reductions.expand(common.new(any_nan, dtypes.bool_, self.device), shape)
        ranks = indexing.masked_fill(scaled, mask, last)
    if interpolation in ("lower", "higher", "nearest"):
        raise NotImplementedError(messages.QUANTILE_INTERPOLATION_NOT_MODELLED)
    below = common.new(ranks._data.astype(np.int64), dtypes.int64, self.device)
    values = indexing.gather(sorted_values, -1, below)
    if interpolation == "midpoint":
        weights = common.new(np.full(ranks.shape, 0.5), ranks.dtype, self.device)
    else:
        weights = ops.sub(ranks, below)
    # ATen's ranks.ceil_() leaves a CeilBackward0 on ranks that no output's graph reaches:
    # only its values are read here
    above = common.new(np.ceil(ranks._data).astype(np.int64), dtypes.int64, self.device)
    _lerp_(values, indexing.gather(sorted_values, -1, above), weights)
    if q.ndim == 0:
        return views_inplace.squeeze_(values, -1)
    moved = views_inplace.transpose_(views_inplace.unsqueeze_(values, 0), 0, -1)
    return views_inplace.squeeze_(moved, -1)


def quantile(self: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    return _quantile(self, q, dim, keepdim, interpolation, False)


def nanquantile(self: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    return _quantile(self, q, dim, keepdim, interpolation, True)

