"""Reductions: sum, mean (and sum_to, the engine's sum of a broadcast grad), prod,
var/var_mean, trace (amax/amin, max/min, argmax/argmin: ops/extremes.py). Each entry follows its
derivatives.yaml formula and saved values."""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import dtypes, forward_ad, messages
from ...autograd_meta import OpSpec, differentiable, linear_forward, record, record_multi_output
from ...dtypes import dtype
from ...grad_mode import is_grad_enabled
from ...tensor import Tensor
from .. import common
from ..common import _compute, new, wrap_dim
from . import elementwise as ops
from . import indexing, views

Dims = int | Sequence[int] | None


def sum_dim(t: Tensor, dim: int) -> Tensor:
    """t.sum(dim, keepdim=True), as the C++ formulas write it."""
    return sum(t, dim, keepdim=True)


def sum_all(t: Tensor) -> Tensor:
    return sum(t)


def _dims(t: Tensor, dim: Dims) -> tuple[int, ...]:
    """An empty or absent dim list reduces every dim (amax's default)."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return tuple(range(t.ndim))
    return _reduce_dims(t, dim)


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

def _sum_backward(c: Any, g: Tensor) -> Tensor:
    if not c.keepdim:
        for d in sorted(c.dim):
            g = views.unsqueeze(g, d)
    return views.expand(g, c.self_sym_sizes)
SUM0 = OpSpec("SumBackward0", ("self",), backward=lambda c, g: [views.expand(g, c.self_sym_sizes)],
              jvp="auto_linear")
SUM1 = OpSpec("SumBackward1", ("self",), backward=lambda c, g: [_sum_backward(c, g)],
              jvp="auto_linear")
MEAN0 = OpSpec("MeanBackward0", ("self",),
               backward=lambda c, g: [ops.div_scalar(views.expand(g, c.self_sym_sizes),
                                                 c.self_sym_numel)], jvp="auto_linear")
MEAN1 = OpSpec("MeanBackward1", ("self",),
               backward=lambda c, g: [ops.div_scalar(_sum_backward(c, g), c.count)],
               jvp="auto_linear")


def _reduce_dims(t: Tensor, dim: int | Sequence[int]) -> tuple[int, ...]:
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    # a 0-d tensor takes dims -1 and 0 (maybe_wrap_dim wraps as for one dim: 1 raises), and
    # reduces none of its (no) dims
    wrapped = tuple(wrap_dim(d, t.ndim) for d in dims)
    return wrapped if t.ndim else ()


@np.errstate(all="ignore")   # inf + -inf is nan, silently, in torch
def _sum_array(a: np.ndarray, dt: dtype, dims: tuple[int, ...] | None = None,
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


def _as(self: Tensor, dt: dtype) -> np.ndarray:
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
        out = new(_sum_array(_as(self, dt), dt), dt, self.device)
        return record(SUM0, out, [self], self_sym_sizes=self._data.shape, **given)
    dims = _reduce_dims(self, dim)
    out = new(_sum_array(_as(self, dt), dt, dims, keepdim), dt, self.device)
    return record(SUM1, out, [self], dim=dims, keepdim=keepdim, self_sym_sizes=self._data.shape,
                  **given)


@linear_forward(MEAN0, MEAN1)
def mean(self: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
         dtype: dtype | None = None) -> Tensor:
    if dtype is not None and not dtype.is_differentiable:
        raise RuntimeError(messages.mean_optional_dtype(dtype.scalar_name))
    if dtype is None and not self.dtype.is_differentiable:
        raise RuntimeError(messages.mean_dtype(self.dtype.scalar_name))
    dt = dtype or self.dtype
    given = {} if dtype is None else {"dtype": dtype}
    if dim is None:
        total = _sum_array(_as(self, dt), dt)
        out = new(_compute(lambda t: t / self.numel(), total), dt, self.device)
        return record(MEAN0, out, [self], self_sym_sizes=self._data.shape,
                      self_sym_numel=self.numel(), **given)
    dims = _reduce_dims(self, dim)
    count = int(np.prod([self.shape[d] for d in dims])) if self.ndim else 1
    # mean is sum / count, so a mean of -0.0s is +0.0 too.
    total = _sum_array(_as(self, dt), dt, dims, keepdim)
    out = new(_compute(lambda t: t / count, total), dt, self.device)
    return record(MEAN1, out, [self], dim=dims, keepdim=keepdim,
                  self_sym_sizes=self._data.shape, count=count, **given)


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


# ---- var / var_mean -----------------------------------------------------------------------

def _var_backward(g: Tensor, x: Tensor, dim: tuple[int, ...] | None, correction: float,
                  keepdim: bool) -> Tensor:
    """torch's var_backward (FunctionsManual.cpp), op for op."""
    if x.ndim == 0 or dim is None:
        dof = x.numel() - correction
        if dof <= 0:
            # 2 / dof is infinite: NaN where x equals its mean (inf * 0), inf elsewhere
            x_mean = np.mean(x._data)
            factor = np.where(x._data == x_mean, np.nan, np.inf).astype(g.dtype.np)
            return ops.mul(g, common.new(factor, g.dtype, g.device))
        return ops.mul(ops.mul_scalar(g, 2.0 / dof), ops.sub(x, mean(x)))
    if not keepdim and x.ndim > 1:
        for d in sorted(dim):     # unsqueeze_multiple
            g = views.unsqueeze(g, d)
    rest = int(np.prod([x.shape[d] for d in dim])) - correction
    scale = 2.0 / rest if rest != 0 else float("inf")
    return ops.mul(ops.mul_scalar(g, scale), ops.sub(x, mean(x, dim or None, keepdim=True)))


def _var_mean_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    gvar, gmean = gs
    x = c.self
    out = None if gvar is None else _var_backward(gvar, x, c.dim, c.correction, c.keepdim)
    if gmean is not None:
        if c.dim:   # mean_backward: sum_backward(grad, sizes, dim, keepdim) / n
            n = int(np.prod([x.shape[d] for d in c.dim]))
            if not c.keepdim:
                for d in sorted(c.dim):
                    gmean = views.unsqueeze(gmean, d)
        else:
            n = x.numel()
        aux = ops.div_scalar(views.expand(gmean, tuple(x.shape)), n)
        out = aux if out is None else ops.add(out, aux)
    return [out]


def _var_jvp(c: Any) -> Tensor:
    """at::real(var_backward(self_t.conj(), self, dim, correction, keepdim=True)
    .sum(dim or all, keepdim)) (the identity's real and conj on real tensors)"""
    terms = _var_backward(ops._conj(c.self_t), c.self, c.dim, c.correction, True)
    return _real_part(sum(terms) if not c.dim else sum(terms, c.dim, c.keepdim))


def _real_part(t: Tensor) -> Tensor:
    """at::real / handle_r_to_c of a real result: the identity on real tensors."""
    from . import complex_numbers
    return complex_numbers.real(t) if t.dtype.is_complex else t


VAR = OpSpec("VarBackward0", ("self",), {"self": ("self",)},
             lambda c, g: [_var_backward(g, c.self, c.dim, c.correction, c.keepdim)],
             jvp=_var_jvp)
# its jvp gives result0's tangent, var's formula (derivatives.yaml var_mean.correction:
# `result0: var_jvp(...)` on this node; result1's, mean's, is recorded with mean's spec)
VAR_MEAN = OpSpec("VarMeanBackward0", ("self",), {"self": ("self",)},
                  _var_mean_backward, jvp=_var_jvp)  # type: ignore[arg-type]


def _var_args(self: Tensor, dim: Any, unbiased: bool | None, correction: float | None
              ) -> tuple[tuple[int, ...] | None, float]:
    """torch.var's overloads: var(x, unbiased), var(x, dim, unbiased, keepdim) and
    var(x, dim, *, correction, keepdim); an empty dim list reduces every dim."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(messages.VAR_DTYPE)
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = None if dim is None else _reduce_dims(self, dim)
    return dims, correction


def _var_values(self: Tensor, dims: tuple[int, ...] | None, correction: float,
                keepdim: bool, op: str, sqrt: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(var, mean); with `sqrt` (std, std_mean) the root taken in double before rounding."""
    axis = dims if dims else None
    n = self.numel() if axis is None else int(np.prod([self.shape[d] for d in axis]))
    if n - correction <= 0:
        warnings.warn(messages.var_dof_warning(op), UserWarning, stacklevel=3)
    # ATen's CPU var/var_mean (WelfordOps) accumulate a float32 tensor in double and round
    # once: in float32 the two-pass sum came out an ulp off (found by the generator). A
    # complex tensor's variance is real, the mean of |x - mean|^2 (its mean stays complex).
    a = self._data.astype(np.complex128 if self.dtype.is_complex else np.float64)
    with np.errstate(all="ignore"):
        mean = np.mean(a, axis=axis, keepdims=True)
        var = np.sum(np.abs(a - mean) ** 2, axis=axis, keepdims=keepdim) / (n - correction)
        var = np.sqrt(var) if sqrt else var
    if not keepdim:
        mean = np.squeeze(mean, axis) if axis is not None else mean.reshape(())
    return (np.asarray(var, dtypes.to_real(self.dtype).np),
            np.asarray(mean, self._data.dtype))


def var(self: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
        *, correction: float | None = None) -> Tensor:
    dims, corr = _var_args(self, dim, unbiased, correction)
    v, _ = _var_values(self, dims, corr, keepdim, "var")
    return record(VAR, common.new(v, dtypes.to_real(self.dtype), self.device), [self], dim=dims,
                  correction=corr, keepdim=keepdim)


def var_mean(self: Tensor, dim: Any = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: float | None = None
             ) -> tuple[Tensor, Tensor]:
    """(var, mean), both outputs of one VarMeanBackward0 node."""
    dims, corr = _var_args(self, dim, unbiased, correction)
    v, m = _var_values(self, dims, corr, keepdim, "var_mean")
    outs = (common.new(v, dtypes.to_real(self.dtype), self.device),
            common.new(m, self.dtype, self.device))
    if differentiable([self]):
        record_multi_output(VAR_MEAN, self, outs,
                            {"dim": dims, "correction": corr, "keepdim": keepdim})
    # the two outputs' tangents: result0 var's formula, result1 mean(self_t, dim, keepdim)
    attrs = {"dim": dims, "correction": corr, "keepdim": keepdim}
    forward_ad.record_tangent(VAR_MEAN, [self], outs[0], attrs)
    forward_ad.record_tangent(MEAN1 if dims else MEAN0, [self], outs[1], attrs)
    return outs


# ---- trace --------------------------------------------------------------------------------

def _trace_backward(g: Tensor, sizes: tuple[int, int]) -> Tensor:
    """FunctionsManual trace_backward_symint: zeros(m * n).index_fill_(0, positions of the
    diagonal, grad).view(m, n). The diagonal has min(m, n) elements, every n + 1 apart in
    the flat layout, also for a non-square matrix."""
    m, n = sizes
    zeros = common.new(np.zeros(m * n), g.dtype, g.device)
    positions = common.new(np.arange(builtins.min(m, n)) * (n + 1), dtypes.int64, g.device)
    # zeros() and index_fill_ each write in place: torch's grad is at _version 2
    filled = common.written_in_place(indexing.index_fill(zeros, 0, positions, g), 2)
    return views.view(filled, sizes)
TRACE = OpSpec("TraceBackward0", ("self",),
               backward=lambda c, g: [_trace_backward(g, c.self_sym_sizes)], jvp="auto_linear")


@linear_forward(TRACE)
def trace(self: Tensor) -> Tensor:
    if self.ndim != 2:
        raise RuntimeError(messages.trace_not_matrix(self.ndim))
    dt = self.dtype if self.dtype.is_differentiable else dtypes.int64
    out = common.new(np.trace(self._data).astype(dt.np), dt, self.device)
    return record(TRACE, out, [self], self_sym_sizes=tuple(self.shape))
