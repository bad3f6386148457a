"""torch's composite reductions: diff, trapz/trapezoid, cumulative_trapezoid, cov, corrcoef.
ATen writes each in other ops (CompositeImplicitAutograd: no derivatives.yaml entry), so each
is written here in those same engine ops, one for one, and its graph is torch's
(aten/src/ATen/native/ReduceOps.cpp's diff, Integration.cpp, Correlation.cpp)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..tensor import Tensor
from . import common, extremes, inplace_ops, joining, piecewise
from .basic import elementwise as ops
from .basic import inplace, to_copy, views
from .basic import reductions as red
from .linalg import mm
from .scans import cumsum

# ---- diff ---------------------------------------------------------------------------------


def diff(self: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """narrow(dim, 1, len - 1) - narrow(dim, 0, len - 1), n times (n capped at the length);
    prepend and append are cat'ed on first; n == 0: zeros_like(self).copy_(self)."""
    if n < 0:
        raise RuntimeError(messages.diff_order(n))
    if self.ndim == 0:
        raise RuntimeError(messages.DIFF_ZERO_DIM)
    d = common.wrap_dim(dim, self.ndim)
    for other in (prepend, append):
        if other is not None and other.ndim != self.ndim:
            raise RuntimeError(messages.DIFF_OTHER_DIMS)
    if n > 0 and (prepend is not None or append is not None):
        self = joining.cat([t for t in (prepend, self, append) if t is not None], d)
    if n == 0:
        return inplace.copy_(common.zeros_like(self), self)
    result = self
    length = self.shape[d] - 1
    for _ in range(min(n, self.shape[d])):
        # ATen's `narrow(1) - narrow(0)` is a call whose operands GCC evaluates right to
        # left: narrow(0) is made first, so narrow(1)'s SliceBackward0 runs first in the
        # backward (the higher sequence number) and a create_graph gradient adds its
        # branch first (found by the generator)
        right = views.narrow(result, d, 0, length)
        result = ops.sub(views.narrow(result, d, 1, length), right)
        length -= 1
    return result


# ---- trapz / trapezoid / cumulative_trapezoid --------------------------------------------

def _dx(y: Tensor, x: Tensor, d: int, op: str) -> Tensor:
    """x (viewed to y's dims) right minus left along d."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(messages.trapezoid_one_x(op))
        sizes = [1] * y.ndim
        sizes[d] = x.shape[0]
        x = views.view(x, tuple(sizes))
    elif x.ndim < y.ndim:
        x = views.view(x, (1,) * (y.ndim - x.ndim) + tuple(x.shape))
    left = views.slice(x, d, 0, -1)   # made first, as diff's narrow(0) (GCC's order)
    return ops.sub(views.slice(x, d, 1, None), left)


def _halves(y: Tensor, d: int) -> Tensor:
    """y.slice(dim, 0, -1) + y.slice(dim, 1): the left and right samples added."""
    return ops.add(views.slice(y, d, 0, -1), views.slice(y, d, 1, None))


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
              dim: int = -1) -> Tensor:
    if y.ndim and y.shape[common.wrap_dim(dim, y.ndim)] == 0:
        shape = [s for i, s in enumerate(y.shape) if i != common.wrap_dim(dim, y.ndim)]
        # at::zeros: made empty, then zeroed in place (_version 1)
        return common.written_in_place(common.new(np.zeros(shape), y.dtype, y.device), 1)
    d = common.wrap_dim(dim, y.ndim)
    if x is not None:
        # ((left + right) * dx).sum(dim) / 2.
        return ops.div_scalar(red.sum(ops.mul(_halves(y, d), _dx(y, x, d, "trapezoid")), d),
                              2.0)
    # (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dx
    ends = ops.add(views.select(y, d, 0), views.select(y, d, -1))
    total = ops.sub(red.sum(y, d), ops.mul_scalar(ends, 0.5))
    return ops.mul_scalar(total, 1.0 if dx is None else float(dx))


def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
          dim: int = -1) -> Tensor:
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
                         dim: int = -1) -> Tensor:
    d = common.wrap_dim(dim, y.ndim)
    if x is not None:
        # ((left + right) * dx).cumsum(dim) / 2.
        dxt = _dx(y, x, d, "cumulative_trapezoid")
        return ops.div_scalar(cumsum(ops.mul(_halves(y, d), dxt), d), 2.0)
    # (dx / 2. * (left + right)).cumsum(dim)
    return cumsum(ops.mul_scalar(_halves(y, d), (1.0 if dx is None else float(dx)) / 2.0), d)


# ---- cov / corrcoef -----------------------------------------------------------------------

def _scalar(value: Any, like: Tensor, dt: dtypes.dtype = dtypes.int64) -> Tensor:
    """at::scalar_tensor(value, options): a 0-d tensor (not a wrapped number)."""
    return common.new(np.asarray(value), dt, like.device)


def _check_weights(w: Tensor, name: str, n: int, integral: bool) -> None:
    if w.ndim > 1:
        raise RuntimeError(messages.cov_weights_dims(name, w.ndim))
    if w.dtype.is_floating_point == integral:   # fweights integral, aweights floating
        raise RuntimeError(messages.cov_weights_dtype(name, integral, w.dtype.scalar_name))
    if w.numel() != n:
        raise RuntimeError(messages.cov_weights_numel(name, w.numel(), n))
    # w.min().ge(0), under grad mode as in torch: aweights' MinBackward1 saves two tensors
    if n and not extremes.min(w)._data >= 0:
        raise RuntimeError(messages.cov_weights_negative(name))


def cov(self: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """Correlation.cpp's cov, op for op."""
    if self.ndim > 2:
        raise RuntimeError(messages.cov_dims("cov", self.ndim))
    inp = views.view(self, (1, -1)) if self.ndim < 2 else self
    n = inp.shape[1]
    w: Tensor | None = None
    if fweights is not None:
        _check_weights(fweights, "fweights", n, True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", n, False)
        w = aweights if w is None else ops.mul(w, aweights)
    w_sum = _scalar(n, inp) if w is None else red.sum(w)
    if w is not None and not np.all(w_sum._data != 0):
        raise RuntimeError(messages.COV_WEIGHTS_ZERO)
    avg = ops.div(red.sum(inp if w is None else ops.mul(inp, w), 1), w_sum)
    if w is None:
        norm_factor = _scalar(n - correction, inp)
    elif correction == 0:
        norm_factor = w_sum
    elif aweights is None:
        norm_factor = ops.sub_scalar(w_sum, correction)
    elif fweights is None and n == 1 and correction == 1:
        norm_factor = _scalar(0, inp)
    else:
        norm_factor = ops.sub(w_sum, ops.div(ops.mul_scalar(red.sum(ops.mul(w, aweights)),
                                                            correction), w_sum))
    if np.all(norm_factor._data <= 0):
        warnings.warn(messages.COV_DOF, UserWarning, stacklevel=2)
        norm_factor = common.zeros_like(norm_factor)
    if n == 1 and (fweights is None) != (aweights is None):
        # ATen's corner case: the weighted mean of one observation is that observation, so
        # it zeroes the input in place (`in.zero_()`: the caller's tensor, or the 1-d one it
        # views; a leaf that requires grad refuses), in float32 when it is integral
        inp = inplace_ops.zero_(inp)
        if not (inp.dtype.is_floating_point or inp.dtype.is_complex):
            inp = to_copy.to(inp, dtypes.float32)
    else:
        inp = ops.sub(inp, views.unsqueeze(avg, 1))
    c = mm(inp, views.t(inp if w is None else ops.mul(inp, w)))
    return views.squeeze(ops.div(c, norm_factor))


def corrcoef(self: Tensor) -> Tensor:
    """cov(self) / stddev.view(-1, 1) / stddev.view(1, -1), clipped to [-1, 1]."""
    if self.ndim > 2:
        raise RuntimeError(messages.cov_dims("corrcoef", self.ndim))
    c = cov(self)
    if c.ndim == 0:
        return ops.div(c, c)
    stddev = ops.sqrt(views.diagonal(c))
    c = ops.div(c, views.view(stddev, (-1, 1)))
    c = ops.div(c, views.view(stddev, (1, -1)))
    return piecewise.clamp(c, -1, 1)
