"""mean, var and var_mean (the first two moments). Each entry follows its derivatives.yaml
formula and saved values. Above the basic ops, which they are written on: their formulas
call elementwise arithmetic, and no basic op's formula calls them (sum and sum_to, which
expand's formula calls: ops/basic/reductions.py)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, forward_ad, messages
from ..autograd_meta import OpSpec, differentiable, linear_forward, record, record_multi_output
from ..dtypes import dtype
from ..tensor import Tensor
from . import common
from .basic import complex_numbers, reductions, views
from .basic import elementwise as ops
from .basic.reductions import as_dtype, reduce_dims, sum, sum_array, sum_backward
from .common import compute_on, new

MEAN0 = OpSpec("MeanBackward0", ("self",),
               backward=lambda c, g: [ops.div_scalar(reductions.expand(g, c.self_sym_sizes),
                                                 c.self_sym_numel)], jvp="auto_linear")
MEAN1 = OpSpec("MeanBackward1", ("self",),
               backward=lambda c, g: [ops.div_scalar(sum_backward(c, g), c.count)],
               jvp="auto_linear")


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
        total = sum_array(as_dtype(self, dt), dt)
        out = new(compute_on(lambda t: t / self.numel(), total), dt, self.device)
        return record(MEAN0, out, [self], self_sym_sizes=self._data.shape,
                      self_sym_numel=self.numel(), **given)
    dims = reduce_dims(self, dim)
    count = int(np.prod([self.shape[d] for d in dims])) if self.ndim else 1
    # mean is sum / count, so a mean of -0.0s is +0.0 too.
    total = sum_array(as_dtype(self, dt), dt, dims, keepdim)
    out = new(compute_on(lambda t: t / count, total), dt, self.device)
    return record(MEAN1, out, [self], dim=dims, keepdim=keepdim,
                  self_sym_sizes=self._data.shape, count=count, **given)


def var_backward(g: Tensor, x: Tensor, dim: tuple[int, ...] | None, correction: float,
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


def var_mean_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    gvar, gmean = gs
    x = c.self
    out = None if gvar is None else var_backward(gvar, x, c.dim, c.correction, c.keepdim)
    if gmean is not None:
        if c.dim:   # mean_backward: sum_backward(grad, sizes, dim, keepdim) / n
            n = int(np.prod([x.shape[d] for d in c.dim]))
            if not c.keepdim:
                for d in sorted(c.dim):
                    gmean = views.unsqueeze(gmean, d)
        else:
            n = x.numel()
        aux = ops.div_scalar(reductions.expand(gmean, tuple(x.shape)), n)
        out = aux if out is None else ops.add(out, aux)
    return [out]


def _var_jvp(c: Any) -> Tensor:
    """at::real(var_backward(self_t.conj(), self, dim, correction, keepdim=True)
    .sum(dim or all, keepdim)) (the identity's real and conj on real tensors)"""
    terms = var_backward(ops.conj_of(c.self_t), c.self, c.dim, c.correction, True)
    return real_part(sum(terms) if not c.dim else sum(terms, c.dim, c.keepdim))


def real_part(t: Tensor) -> Tensor:
    """at::real / handle_r_to_c of a real result: the identity on real tensors."""
    return complex_numbers.real(t) if t.dtype.is_complex else t


VAR = OpSpec("VarBackward0", ("self",), {"self": ("self",)},
             lambda c, g: [var_backward(g, c.self, c.dim, c.correction, c.keepdim)],
             jvp=_var_jvp)
# its jvp gives result0's tangent, var's formula (derivatives.yaml var_mean.correction:
# `result0: var_jvp(...)` on this node; result1's, mean's, is recorded with mean's spec)
VAR_MEAN = OpSpec("VarMeanBackward0", ("self",), {"self": ("self",)},
                  var_mean_backward, jvp=_var_jvp)  # type: ignore[arg-type]


def var_args(self: Tensor, dim: Any, unbiased: bool | None, correction: float | None
              ) -> tuple[tuple[int, ...] | None, float]:
    """torch.var's overloads: var(x, unbiased), var(x, dim, unbiased, keepdim) and
    var(x, dim, *, correction, keepdim); an empty dim list reduces every dim."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(messages.VAR_DTYPE)
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = None if dim is None else reduce_dims(self, dim)
    return dims, correction


def var_values(self: Tensor, dims: tuple[int, ...] | None, correction: float,
                keepdim: bool, op: str, sqrt: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(var, mean); with `sqrt` (std, std_mean) the root taken in double before rounding."""
    axis = dims if dims else None
    n = self.numel() if axis is None else int(np.prod([self.shape[d] for d in axis]))
    # ATen's reduction factor is input numel / output numel: 0 for an empty input, also
    # where the reduced dims themselves are not empty (var of a (0, 3) tensor along dim 1)
    if (n if self.numel() else 0) - correction <= 0:
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
    dims, corr = var_args(self, dim, unbiased, correction)
    v, _ = var_values(self, dims, corr, keepdim, "var")
    return record(VAR, common.new(v, dtypes.to_real(self.dtype), self.device), [self], dim=dims,
                  correction=corr, keepdim=keepdim)


def var_mean(self: Tensor, dim: Any = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: float | None = None
             ) -> tuple[Tensor, Tensor]:
    """(var, mean), both outputs of one VarMeanBackward0 node."""
    dims, corr = var_args(self, dim, unbiased, correction)
    v, m = var_values(self, dims, corr, keepdim, "var_mean")
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
