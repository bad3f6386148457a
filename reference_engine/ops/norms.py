"""Norms: norm (linalg_vector_norm) with its backward and jvp (norm_backward, norm_jvp, which
other families call), dist, renorm. Each is its derivatives.yaml formula, written in engine
ops."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..dtypes import dtype
from ..tensor import Tensor
from . import backward as bw
from . import common
from . import unary_via_backward as ub  # abs, tanh, sigmoid, relu
from .basic import comparisons, powers
from .basic import elementwise as ops
from .basic import reductions as red
from .basic.complex_numbers import conj, real
from .statistics import Dims, bool_tensor, masked_zero, sum_dims, unsqueeze_dims

# ---- norm (linalg_vector_norm) / dist -----------------------------------------------------

def norm_backward(g: Tensor, x: Tensor, p: float, norm: Tensor, dims: Dims,
                  keepdim: bool) -> Tensor | None:
    """FunctionsManual norm_backward, case by case on p (for complex x, sgn x is x / |x|)."""
    g = unsqueeze_dims(g, dims, keepdim, x.ndim)
    norm = unsqueeze_dims(norm, dims, keepdim, x.ndim)
    if p == 0.0:
        return None      # an undefined grad
    if p == 1.0:
        return ops.mul(bw.sgn(x), g)
    if p == 2.0:
        return ops.mul(g, masked_zero(ops.div(x, norm), np.broadcast_to(norm._data == 0,
                                                                          x.shape)))
    if math.isinf(p):
        # the derivative of amax(abs(self)) spread over the maxima (and NaNs)
        absx = np.abs(x._data)
        mask = bool_tensor(x, (absx == norm._data) | np.isnan(absx))
        return ops.mul(bw.sgn(x), ops.mul(ops.div(g, sum_dims(mask, dims, True)), mask))
    if p < 1.0:
        scaled = ops.mul(bw.sgn(x), masked_zero(powers.pow(ub.abs(x), p - 1),
                                                x._data == 0))
        return ops.mul(ops.mul(scaled, g), powers.pow(norm, 1 - p))
    if p < 2.0:
        scaled = ops.mul(bw.sgn(x), powers.pow(ub.abs(x), p - 1))
    else:
        scaled = ops.mul(x, powers.pow(ub.abs(x), p - 2))
    scale = masked_zero(ops.div(g, powers.pow(norm, p - 1)), np.broadcast_to(
        norm._data == 0, np.broadcast_shapes(g.shape, norm.shape)))
    return ops.mul(scaled, scale)


def norm_jvp(x: Tensor, x_t: Tensor, p: float, norm: Tensor, dims: Dims,
             keepdim: bool) -> Tensor:
    """FunctionsManual norm_jvp: for complex x, the real part of conj(x) (or conj(sgn x))
    times the tangent, where a real x has x (sgn x)."""
    if p == 0.0:
        return common.zeros_like(norm)
    sgn_t = real(ops.mul(conj(bw.sgn(x)), x_t))
    if p == 1.0:
        return sum_dims(sgn_t, dims, keepdim)
    if p == 2.0:
        # torch's `result.div_(norm).masked_fill_(norm == 0, 0)`: two in-place steps, the
        # tangent at version 2 (the other orders' one masked_fill_: version 1)
        quotient = ops.div(sum_dims(real(ops.mul(conj(x), x_t)), dims, keepdim), norm)
        return common.written_in_place(masked_zero(quotient, norm._data == 0))
    if math.isinf(p):
        n = unsqueeze_dims(norm, dims, keepdim, x.ndim)
        is_max = (np.abs(x._data) == n._data) | (np.isnan(x._data) & np.isnan(n._data))
        count = is_max.sum(axis=dims or None, keepdims=True)
        eq = common.new(is_max, norm.dtype, x.device)
        nb = common.new(count, dtypes.int64, x.device)
        return sum_dims(ops.div(ops.mul(sgn_t, eq), nb), dims, keepdim)
    if p < 1.0:
        powed = masked_zero(powers.pow(ub.abs(x), p - 1), x._data == 0)
        s = sum_dims(ops.mul(powed, sgn_t), dims, keepdim)
        return ops.mul(s, powers.pow(norm, 1 - p))
    if p < 2.0:
        s = sum_dims(ops.mul(powers.pow(ub.abs(x), p - 1), sgn_t), dims, keepdim)
    else:
        s = sum_dims(ops.mul(powers.pow(ub.abs(x), p - 2), real(ops.mul(conj(x), x_t))), dims,
                     keepdim)
    return masked_zero(ops.div(s, powers.pow(norm, p - 1)), norm._data == 0)


LINALG_VECTOR_NORM = OpSpec(
    "LinalgVectorNormBackward0", ("self",), {"self": ("self", "result")},
    lambda c, g: [norm_backward(g, c.self, c.ord, c.result, c.dim, c.keepdim)],
    jvp=lambda c: norm_jvp(c.self, c.self_t, c.ord, c.result, c.dim, c.keepdim))


def vector_norm_array(a: np.ndarray, p: float, dims: Dims | None, keepdim: bool
                      ) -> np.ndarray:
    """The p-norm over dims (None: all) in float64 (of |z| for complex z), except that a sum
    of |a| ** p beyond a's dtype's largest value is inf: torch's norm kernels sum the powers
    in the tensor's (real) dtype, unscaled (the 2-norm of float32 [1.5e19, 1.5e19] is inf)."""
    top = np.finfo(a.dtype).max if a.dtype.kind in "fc" else np.inf
    a = np.abs(a).astype(np.float64) if np.iscomplexobj(a) else np.abs(a.astype(np.float64))
    axis = dims if dims else None

    def total(powers: np.ndarray) -> np.ndarray:
        summed = np.sum(powers, axis=axis, keepdims=keepdim)
        return np.where(summed > top, np.inf, summed)
    with np.errstate(all="ignore"):
        if p == 0:
            return np.sum(a != 0, axis=axis, keepdims=keepdim).astype(np.float64)
        if math.isinf(p):
            if a.size == 0:
                return np.zeros(np.sum(a, axis=axis, keepdims=keepdim).shape)
            return (np.amax if p > 0 else np.amin)(a, axis=axis, keepdims=keepdim)
        if p == 1:
            return total(a)
        if p == 2:
            return np.sqrt(total(a * a))
        return np.asarray(total(a ** p) ** (1.0 / p))


def vector_norm(self: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: dtype | None = None) -> Tensor:
    """torch.linalg.vector_norm (the op torch.norm calls for a vector or Frobenius norm)."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(messages.vector_norm_dtype(self.dtype.scalar_name))
    p = float(ord)
    dims: Dims = () if dim is None else red.reduced_dims(self, dim)
    if self.numel() == 0 and (p < 0 or math.isinf(p)) and (
            not dims or any(self.shape[d] == 0 for d in dims)):
        raise RuntimeError(messages.vector_norm_empty(p))
    dt = dtype or dtypes.to_real(self.dtype)
    # a real tensor is summed in the dtype asked for; a complex one's |z| in its real dtype
    data = self._data if self.dtype.is_complex else self._data.astype(dt.np, copy=False)
    arr = vector_norm_array(data, p, dims or None, keepdim)
    if keepdim and not dims:
        arr = arr.reshape((1,) * self.ndim)
    out = common.new(arr, dt, self.device)
    return record(LINALG_VECTOR_NORM, out, [self], ord=p, dim=dims, keepdim=keepdim)


def norm(self: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         out: Tensor | None = None, dtype: dtype | None = None) -> Tensor:
    """torch.norm's vector norms (torch/functional.py, whose first parameter is `input`) on
    a strided tensor: 'fro' over at most two dims and every numeric p are
    linalg.vector_norm; its matrix norms are ops/torch_norm.py's (refused here)."""
    dims = [dim] if isinstance(dim, int) else dim
    if out is not None:
        raise NotImplementedError(messages.NORM_OUT_NOT_MODELLED)
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(self, 2, dims, keepdim, dtype=dtype)
        raise NotImplementedError(messages.NORM_MATRIX_NOT_MODELLED)
    return vector_norm(self, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


def _dist_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """norm_backward(grad, self - other, p, result) and its negation for other: each formula
    computes its own self - other, as derivatives.yaml's (two SubBackward0 under
    create_graph, not one shared)."""
    return c.grads(
        lambda: norm_backward(g, ops.sub(c.self, c.other), c.p, c.result, (), False),
        lambda: _neg(norm_backward(g, ops.sub(c.self, c.other), c.p, c.result, (), False)))


def _neg(t: Tensor | None) -> Tensor | None:
    return None if t is None else ops.neg(t)


DIST = OpSpec("DistBackward0", ("self", "other"),
              {"self": ("self", "other", "result"), "other": ("self", "other", "result")},
              _dist_backward,
              jvp=lambda c: norm_jvp(ops.sub(c.self, c.other), ops.sub(c.self_t, c.other_t),
                                     c.p, c.result, (), False))


def dist(self: Tensor, other: Tensor, p: float = 2) -> Tensor:
    dt = common.result_dtype([self, other])
    common.broadcast_shape(tuple(self.shape), tuple(other.shape))   # sub's error, not NumPy's
    diff = common.compute_on(np.subtract, self._data.astype(dt.np), other._data.astype(dt.np))
    out = common.new(vector_norm_array(diff, float(p), None, False), dt,
                     common.common_device([self, other]))
    return record(DIST, out, [self, other], p=float(p))


# ---- renorm -------------------------------------------------------------------------------

def _others(ndim: int, dim: int) -> Dims:
    return tuple(d for d in range(ndim) if d != dim)


def _renorm_backward(c: Any, g: Tensor) -> Tensor:
    """FunctionsManual renorm_backward: where(norm > maxnorm, maxnorm * invnorm *
    (grad - invnorm * norm_backward(sum(self * grad), self, p, norm)), grad), its ops in
    its order (create_graph builds its nodes)."""
    x, p, maxnorm = c.self, c.p, c.maxnorm
    dims = _others(x.ndim, c.dim)
    norm = vector_norm(x, p, dims, True)
    grad_output = sum_dims(ops.mul(x, g), dims, True)
    nb = norm_backward(grad_output, x, p, norm, dims, True)
    invnorm = ops.reciprocal(ops.add_scalar(norm, 1e-7))
    factor = ops.mul_scalar(invnorm, maxnorm)   # C++'s Scalar * Tensor: MulBackward1
    inner = g if nb is None else ops.sub(g, ops.mul(invnorm, nb))
    return comparisons.where(bool_tensor(x, norm._data > maxnorm), ops.mul(factor, inner), g)


def _renorm_jvp(c: Any) -> Tensor:
    x, x_t, p, maxnorm = c.self, c.self_t, c.p, c.maxnorm
    dims = _others(x.ndim, c.dim)
    norm = vector_norm(x, p, dims, True)
    invnorm = ops.reciprocal(ops.add_scalar(norm, 1e-7))
    factor = ops.mul_scalar(invnorm, maxnorm)
    inner = ops.mul(ops.mul(x, invnorm), norm_jvp(x, x_t, p, norm, dims, True))
    return comparisons.where(bool_tensor(x, norm._data > maxnorm),
                             ops.mul(factor, ops.sub(x_t, inner)), x_t)


RENORM = OpSpec("RenormBackward0", ("self",), {"self": ("self",)},
                lambda c, g: [_renorm_backward(c, g)], jvp=_renorm_jvp)


def renorm(self: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along dim whose p-norm exceeds maxnorm scaled by maxnorm / (norm + 1e-7),
    the norm accumulated in double (ATen's acc_type on CPU)."""
    if self.ndim < 2:
        raise RuntimeError(messages.renorm_dims(self.ndim))
    d = common.wrap_dim(dim, self.ndim)
    norms = vector_norm_array(self._data, float(p), _others(self.ndim, d), True)
    factor = np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    arr = (self._data * factor.astype(self._data.dtype)).astype(self._data.dtype)
    return record(RENORM, common.new(arr, self.dtype, self.device), [self], p=float(p),
                  dim=d, maxnorm=float(maxnorm))
