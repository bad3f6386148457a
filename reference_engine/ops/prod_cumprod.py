"""prod and cumprod, the products of elements: each one's backward formula calls the other
(FunctionsManual's prod_safe_zeros_backward takes exclusive cumprods; cumprod_backward's
create_graph branch takes prods), so they share a module above reductions.py and scans.py."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..autograd_meta import OpSpec, record
from ..dtypes import dtype
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor
from . import common, joining
from .basic import comparisons, copying, inplace, to_copy, views
from .basic import elementwise as ops
from .basic import reductions as red
from .scans import along_dim, cumsum, flip_dim, out_dtype, reversed_cumsum, wrapped_dim

# ---- prod -------------------------------------------------------------------------------

def prod_backward_safe_zeros(g: Tensor, x: Tensor, dim: int) -> Tensor:
    """grad * exclusive cumprod from the front * exclusive cumprod from the back: safe with
    zeros, and differentiable again (FunctionsManual prod_safe_zeros_backward; the product
    conjugated for complex tensors)."""
    if x.numel() == 0:
        return red.expand(g, tuple(x.shape))
    ones_shape = list(x.shape)
    ones_shape[dim] = 1
    ones = common.new(np.ones(ones_shape), g.dtype, g.device)
    n = x.shape[dim]
    normal = cumprod(joining.cat([ones, views.narrow(x, dim, 0, n - 1)], dim), dim)
    rev = joining.cat([ones, flip_dim(views.narrow(x, dim, 1, n - 1), dim)], dim)
    return ops.mul(g, ops.conj_of(ops.mul(normal, flip_dim(cumprod(rev, dim), dim))))


def _prod_backward(c: Any, g: Tensor) -> Tensor:
    """FunctionsManual prod_backward: grad * (result / self).conj() without zeros; with some,
    prod_safe_zeros_backward (of the flattened input without dim: and with more than one
    zero outside grad mode, zeros)."""
    x, result = c.self, c.result
    if x.dtype != g.dtype:
        x = to_copy.to(x, g.dtype)
    if x.ndim == 0:
        return g
    if c.dim is not None and not c.keepdim:
        g, result = views.unsqueeze(g, c.dim), views.unsqueeze(result, c.dim)
    zeros = int(np.count_nonzero(x._data == 0))
    if zeros == 0:
        return ops.mul(g, ops.conj_of(ops.div(result, x)))
    if c.dim is not None:
        return prod_backward_safe_zeros(g, x, c.dim)
    if zeros > 1 and not is_grad_enabled():
        return common.zeros_contiguous(x)   # zeros_like(input, LEGACY_CONTIGUOUS_MEMORY_FORMAT)
    flat = views.view(x if x.is_contiguous() else copying.clone(x), (-1,))
    return views.view(prod_backward_safe_zeros(g, flat, 0), tuple(x.shape))
def _prod_jvp(c: Any) -> Tensor:
    """(prod_backward(ones_like(result), self, result[, dim, keepdim]) * self_t.conj())
    .sum([dim, keepdim]).conj() (the conjs are the identity on real tensors)"""
    ones = common.new(np.ones(c.result.shape), c.result.dtype, c.result.device)
    terms = ops.mul(_prod_backward(c, ones), ops.conj_of(c.self_t))
    return ops.conj_of(red.sum(terms) if c.dim is None else red.sum(terms, c.dim, c.keepdim))


PROD0 = OpSpec("ProdBackward0", ("self",), {"self": ("self", "result")},
               lambda c, g: [_prod_backward(c, g)], jvp=_prod_jvp)
PROD1 = OpSpec("ProdBackward1", ("self",), {"self": ("self", "result")},
               lambda c, g: [_prod_backward(c, g)], jvp=_prod_jvp)


def prod(self: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: dtype | None = None) -> Tensor:
    dt = dtype or (self.dtype if self.dtype.is_differentiable else dtypes.int64)
    if dim is None:
        out = common.new(common.compute_on(lambda a: np.prod(a, dtype=dt.np), self._data), dt,
                      self.device)
        return record(PROD0, out, [self], dim=None, keepdim=False)
    d = common.wrap_dim(dim, self.ndim)
    out = common.new(common.compute_on(lambda a: np.prod(a, axis=d, keepdims=keepdim, dtype=dt.np),
                               self._data), dt, self.device)
    return record(PROD1, out, [self], dim=d, keepdim=keepdim)


# ---- cumprod ------------------------------------------------------------------------------

def _first_zero_grad(g: np.ndarray, x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """cumprod_backward's O(n) branch (no grad mode, some input zero), along the last dim:
    before the first zero reversed_cumsum(w) / x; at the first zero z1 the product before it
    times sum(grad[z1:z2] * cumprod of the ones after z1); zero (a +0.0) after z1."""
    is_zero = x == 0
    csum = np.cumsum(is_zero, -1)
    res = np.zeros_like(g)
    with np.errstate(all="ignore"):
        mask = csum == 0
        w = np.where(mask, out * g, 0)
        before = np.flip(np.cumsum(np.flip(w, -1), -1), -1) / x
        res = np.where(mask, before, res)
        mask = csum == 1
        first = np.argmax(mask, -1)[..., None]
        first_mask = np.zeros_like(mask)
        np.put_along_axis(first_mask, first, True, -1)
        first_mask &= mask
        between = mask & ~first_mask
        at_fz = (np.cumprod(np.where(between, x, 1), -1) * np.where(csum != 1, 0, g)).sum(
            -1, keepdims=True)
        prev = np.take_along_axis(out, np.maximum(first - 1, 0), -1)
        at_fz = at_fz * np.where(first == 0, 1, prev)
        res = np.where(first_mask, at_fz, res)
    return res


def _cumprod_backward(c: Any, g: Tensor) -> Tensor:
    """FunctionsManual cumprod_backward(grad.to(self.scalar_type()), self, dim, result)."""
    x, out, d = c.self, c.result, c.dim
    if x.numel() <= 1 or x.shape[d] == 1:
        return g
    w = ops.mul(out, g)
    if not np.any(x._data == 0):
        return ops.div(reversed_cumsum(w, d), x)
    if not is_grad_enabled():
        arr = along_dim(g._data, d, lambda gg: _first_zero_grad(
            gg, np.moveaxis(x._data, d, -1), np.moveaxis(out._data, d, -1)))
        return common.new(arr, g.dtype, g.device)
    # with create_graph: torch's O(n^2) formula, whose derivative is cumprod's second one,
    # each slice copied into zeros: grad_input.select(dim, k).copy_(...) (CopySlices)
    n = x.shape[d]
    # at::zeros is empty().zero_(): one write before the n copies
    grad_input = common.written_in_place(common.new(np.zeros(x.shape), g.dtype, g.device))
    ones_shape = list(x.shape)
    ones_shape[d] = 1
    ones = common.new(np.ones(ones_shape), g.dtype, g.device)
    for k in range(n):
        if k == 0:
            omitted = joining.cat([ones, cumprod(views.narrow(x, d, 1, n - 1), d)], d)
        elif k == n - 1:
            omitted = prod(views.narrow(x, d, 0, k), d, True)
        else:
            until = prod(views.narrow(x, d, 0, k), d, True)
            after = cumprod(views.narrow(x, d, k + 1, n - k - 1), d)
            omitted = joining.cat([until, ops.mul(red.expand(until, after.shape), after)], d)
        grad_slice = red.sum(ops.mul(views.narrow(g, d, k, n - k), omitted), d)
        inplace.copy_(views.select(grad_input, d, k), grad_slice)
    return grad_input


def _cumprod_jvp(c: Any) -> Tensor:
    """cumprod_jvp(self_t, self_p, result, dim): (self_t / self_p).cumsum(dim) * result, and
    past the first zero cumprod(where(first zero, self_t, self_p))."""
    x, x_t, d = c.self, c.self_t, c.dim
    gradient = ops.mul(cumsum(ops.div(x_t, x), d), c.result)
    zeros = x._data == 0
    if x.ndim == 0:
        return comparisons.where(common.new(zeros, dtypes.bool_, x.device), x_t, gradient)
    first = zeros & (np.cumsum(zeros, d) == 1)
    new_grad = cumprod(comparisons.where(common.new(first, dtypes.bool_, x.device), x_t, x), d)
    after = common.new(np.cumsum(first, d) > 0, dtypes.bool_, x.device)
    return comparisons.where(after, new_grad, gradient)


CUMPROD = OpSpec("CumprodBackward0", ("self",), {"self": ("self", "result")},
                 lambda c, g: [_cumprod_backward(c, g)], jvp=_cumprod_jvp)


def cumprod(self: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
    d = wrapped_dim(self, dim)
    dt = out_dtype(self, dtype)
    acc = np.float64 if dt.is_floating_point else dt.np
    arr = common.compute_on(lambda a: along_dim(a.astype(acc), d, lambda x: np.cumprod(x, -1)),
                            self._data)
    return record(CUMPROD, common.new(arr, dt, self.device), [self], dim=d)
