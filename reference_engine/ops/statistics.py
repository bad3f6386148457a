"""Statistics: std/std_mean, logsumexp, nansum/nanmean, aminmax (norm, dist, renorm:
ops/norms.py). Each backward and jvp is its derivatives.yaml formula (FunctionsManual.cpp),
written in engine ops; nanmean is torch's composite (nansum / count), so its graph is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, forward_ad, messages
from ..autograd_meta import OpSpec, differentiable, record, record_multi_output
from ..dtypes import dtype
from ..tensor import Tensor
from . import common, extremes, moments
from .basic import comparisons, indexing, to_copy, views
from .basic import elementwise as ops
from .basic import reductions as red

Dims = tuple[int, ...]


def bool_tensor(t: Tensor, arr: np.ndarray) -> Tensor:
    return common.new(arr, dtypes.bool_, t.device)


def sum_dims(t: Tensor, dims: Dims, keepdim: bool) -> Tensor:
    """t.sum(dims, keepdim) as the C++ formulas call it: an empty dim list sums every dim."""
    if not dims:
        return red.sum(t, tuple(range(t.ndim)), keepdim) if keepdim and t.ndim else red.sum(t)
    return red.sum(t, dims, keepdim)


def unsqueeze_dims(t: Tensor, dims: Dims, keepdim: bool, ndim: int) -> Tensor:
    """unsqueeze_multiple(t, dims, ndim) where keepdim is false and self is not 0-d."""
    if keepdim or ndim == 0:
        return t
    for d in sorted(dims):
        t = views.unsqueeze(t, d)
    return t


def masked_zero(t: Tensor, where: np.ndarray) -> Tensor:
    """t.masked_fill_(where, 0) (written in place: the grad's _version is 1)."""
    return common.written_in_place(indexing.masked_fill(t, bool_tensor(t, where), 0))


# ---- std / std_mean -----------------------------------------------------------------------

def _std_backward(g: Tensor, x: Tensor, std: Tensor, dims: Dims | None, correction: float,
                  keepdim: bool) -> Tensor:
    """std_backward: var_backward((grad / (result * 2)).masked_fill_(result == 0, 0), ...)"""
    grad_var = masked_zero(ops.div(g, ops.mul_scalar(std, 2)), std._data == 0)
    return moments.var_backward(grad_var, x, dims, correction, keepdim)


def _std_jvp(x: Tensor, x_t: Tensor, std: Tensor, dims: Dims | None, correction: float,
             keepdim: bool) -> Tensor:
    """(handle_r_to_c(var_backward(self_t.conj(), self, dim, correction, true).sum(dim or
    all, keepdim)) / (2 * result)).masked_fill_(result == 0, 0)"""
    terms = moments.var_backward(ops.conj_of(x_t), x, dims, correction, True)
    var_t = moments.real_part(red.sum(terms) if not dims else red.sum(terms, dims, keepdim))
    return masked_zero(ops.div(var_t, ops.mul_scalar(std, 2)), std._data == 0)


STD = OpSpec("StdBackward0", ("self",), {"self": ("self", "result")},
             lambda c, g: [_std_backward(g, c.self, c.result, c.dim, c.correction, c.keepdim)],
             jvp=lambda c: _std_jvp(c.self, c.self_t, c.result, c.dim, c.correction,
                                    c.keepdim))


def _std_mean_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """std_mean_backward: std_backward(gstd) + mean_backward(gmean), each if defined."""
    gstd, gmean = gs
    out = None if gstd is None else _std_backward(gstd, c.self, c.result0, c.dim,
                                                  c.correction, c.keepdim)
    if gmean is not None:
        aux = moments.var_mean_backward(c, [None, gmean])[0]
        out = aux if out is None else ops.add(out, aux)
    return [out]


# result0 (the std) is saved after self, as an output attribute
# its jvp gives result0's tangent, std's formula (derivatives.yaml std_mean.correction:
# `result0: std_jvp(...)` on this node; result1's, mean's, is recorded with mean's spec)
STD_MEAN = OpSpec("StdMeanBackward0", ("self",), {"self": ("self", "result0")},
                  _std_mean_backward, saved_outputs=("result0",),  # type: ignore[arg-type]
                  jvp=STD.jvp)


def _std_values(self: Tensor, dim: Any, unbiased: bool | None, keepdim: bool,
                correction: float | None, op: str
                ) -> tuple[np.ndarray, np.ndarray, Dims | None, float]:
    dims, corr = moments.var_args(self, dim, unbiased, correction)
    v, m = moments.var_values(self, dims, corr, keepdim, op, sqrt=True)
    return v, m, dims, corr


def std(self: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
        *, correction: float | None = None) -> Tensor:
    v, _, dims, corr = _std_values(self, dim, unbiased, keepdim, correction, "std")
    return record(STD, common.new(v, dtypes.to_real(self.dtype), self.device), [self], dim=dims,
                  correction=corr, keepdim=keepdim)


def std_mean(self: Tensor, dim: Any = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: float | None = None
             ) -> tuple[Tensor, Tensor]:
    """(std, mean), both outputs of one StdMeanBackward0 node."""
    v, m, dims, corr = _std_values(self, dim, unbiased, keepdim, correction, "std_mean")
    outs = (common.new(v, dtypes.to_real(self.dtype), self.device),
            common.new(m, self.dtype, self.device))
    attrs = {"dim": dims, "correction": corr, "keepdim": keepdim}
    if differentiable([self]):
        record_multi_output(STD_MEAN, self, outs, {**attrs, "result0": outs[0]})
    # result0's tangent std's formula, result1's mean(self_t, dim, keepdim)
    forward_ad.record_tangent(STD_MEAN, [self], outs[0], attrs)
    forward_ad.record_tangent(moments.MEAN1 if dims else moments.MEAN0, [self], outs[1], attrs)
    return outs


# ---- logsumexp ----------------------------------------------------------------------------

def _logsumexp_backward(c: Any, g: Tensor) -> Tensor:
    """grad * (self - result).exp(), grad and result unsqueezed where dims were reduced."""
    x = c.self
    g = unsqueeze_dims(g, c.dim, c.keepdim, x.ndim)
    result = unsqueeze_dims(c.result, c.dim, c.keepdim, x.ndim)
    return ops.mul(g, ops.exp(ops.sub(x, result)))


def _logsumexp_jvp(c: Any) -> Tensor:
    """logsumexp_jvp: (exp(self - amax(self, dim, true)) * self_t).sum(dim, keepdim) /
    exp(self - amax).sum(dim, keepdim); torch's last step divides in place
    (`sumexp_t /= sumexp_p`), so the tangent it returns is at version 1."""
    x = c.self
    e = ops.exp(ops.sub(x, extremes.amax(x, c.dim, True))) if x.numel() else ops.exp(x)
    return common.written_in_place(
        ops.div(sum_dims(ops.mul(e, c.self_t), c.dim, c.keepdim), sum_dims(e, c.dim, c.keepdim)))


LOGSUMEXP = OpSpec("LogsumexpBackward0", ("self",), {"self": ("self", "result")},
                   lambda c, g: [_logsumexp_backward(c, g)], jvp=_logsumexp_jvp)


def logsumexp(self: Tensor, dim: int | Sequence[int], keepdim: bool = False) -> Tensor:
    """ATen's logsumexp: amax(self, dim) (infinities taken as 0) + log(sum(exp(self - it))),
    an integral input in the default float dtype."""
    dims = red.reduced_dims(self, dim)
    dt = common.float_dtype(self)
    a = self._data.astype(dt.np)

    def compute(a: np.ndarray) -> np.ndarray:
        if a.size == 0:
            return np.log(np.sum(np.exp(a), axis=dims, keepdims=keepdim))
        top = np.amax(a, axis=dims, keepdims=True)
        top = np.where(np.isinf(top), 0, top)
        total = np.log(np.sum(np.exp(a - top), axis=dims, keepdims=True)) + top
        return total if keepdim else np.squeeze(total, dims)
    out = common.new(common.compute_on(compute, a), dt, self.device)
    return record(LOGSUMEXP, out, [self], dim=dims, keepdim=keepdim)


# ---- nansum / nanmean ---------------------------------------------------------------------

def _nansum_backward(c: Any, g: Tensor) -> Tensor:
    """nansum_backward: sum_backward(grad, sizes, dims, keepdim) * self.isnan().logical_not()"""
    x = c.self
    g = to_copy.to(g, x.dtype) if g.dtype != x.dtype else g
    g = red.expand(unsqueeze_dims(g, c.dim, c.keepdim, x.ndim), tuple(x.shape))
    return ops.mul(g, bool_tensor(x, ~np.isnan(x._data)))


def _nansum_jvp(c: Any) -> Tensor:
    """at::where(self_p.isnan(), 0, self_t).sum(dim, keepdim, dtype)"""
    x = c.self
    t = comparisons.where(bool_tensor(x, np.isnan(x._data)), 0, c.self_t)
    return sum_dims(to_copy.to(t, c.result.dtype), c.dim, c.keepdim)


NANSUM = OpSpec("NansumBackward0", ("self",), {"self": ("self",)},
                lambda c, g: [_nansum_backward(c, g)], jvp=_nansum_jvp)


def nansum(self: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
           dtype: dtype | None = None) -> Tensor:
    dims = red.reduced_dims(self, dim)
    dt = dtype or (self.dtype if self.dtype.is_floating_point else dtypes.int64)
    a = np.where(np.isnan(self._data), 0, self._data) if self.dtype.is_floating_point \
        else self._data
    out = common.new(red.sum_array(a.astype(dt.np), dt, dims, keepdim), dt, self.device)
    return record(NANSUM, out, [self], dim=() if dim is None else dims, keepdim=keepdim)


def nanmean(self: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
            dtype: dtype | None = None) -> Tensor:
    """torch's composite: nansum(self, dim, keepdim, dtype) / (~self.isnan()).sum(dim,
    keepdim)."""
    if not (self.dtype.is_floating_point or (dtype is not None and dtype.is_floating_point)):
        raise RuntimeError(messages.nanmean_dtype((dtype or self.dtype).scalar_name))
    count = bool_tensor(self, ~np.isnan(self._data))
    factor = red.sum(count) if dim is None else red.sum(count, dim, keepdim)
    return ops.div(nansum(self, dim, keepdim, dtype=dtype), factor)


# ---- aminmax ------------------------------------------------------------------------------

aminmax_return_type = type("aminmax", (tuple,), {
    "min": property(lambda self: self[0]), "max": property(lambda self: self[1])})


def _scale_grad_by_count(g: Tensor, x: Tensor, value: Tensor, dims: Dims,
                         keepdim: bool) -> Tensor:
    """scale_grad_by_count(restore_reduced_dims(grad), restore_reduced_dims(value) == self,
    dims): the grad shared evenly by the elements equal to the value."""
    restored = red.restore_reduced_dims(value, dims, keepdim, x.ndim)
    mask = x._data == restored._data
    count = common.new(mask.sum(axis=dims, keepdims=True), dtypes.int64, x.device)
    g = red.restore_reduced_dims(g, dims, keepdim, x.ndim)
    return ops.mul(ops.div(g, count), bool_tensor(x, mask))


def _aminmax_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    gmin, gmax = gs
    out = None if gmin is None else _scale_grad_by_count(gmin, c.self, c.min, c.dims,
                                                         c.keepdim)
    if gmax is not None:
        aux = _scale_grad_by_count(gmax, c.self, c.max, c.dims, c.keepdim)
        out = aux if out is None else ops.add(out, aux)
    return [out]


AMINMAX = OpSpec("AminmaxBackward0", ("self",), {"self": ("self", "min", "max")},
                 _aminmax_backward, saved_outputs=("max", "min"))  # type: ignore[arg-type]


def aminmax(self: Tensor, *, dim: int | None = None, keepdim: bool = False,
            out: tuple[Tensor, Tensor] | None = None) -> Any:
    if self.ndim > 64:
        raise RuntimeError(messages.TOO_MANY_DIMS)
    if dim is None:
        if self.numel() == 0:
            raise RuntimeError(messages.AMINMAX_EMPTY)
        dims: Dims = tuple(range(self.ndim))
    else:
        d = common.wrap_dim(dim, self.ndim)
        dims = (d,) if self.ndim else ()
        if self.ndim and self.shape[d] == 0:
            raise IndexError(messages.reduction_dim_empty("aminmax", d))
    if out is not None:
        for o in out:
            if o.dtype is not self.dtype:
                # the dtypes' TypeMeta names: "float", "double" (lower-case C type names)
                raise RuntimeError(messages.out_dtype(self.dtype.scalar_name.lower(),
                                                      o.dtype.scalar_name.lower()))
        raise NotImplementedError(messages.AMINMAX_OUT_NOT_MODELLED)
    keep = keepdim and dim is not None

    def extreme(largest: bool) -> Tensor:
        if self.numel() == 0:   # an empty result (the reduced dim is not the empty one)
            arr = np.amax(self._data, axis=dims, keepdims=keep, initial=0)
        else:
            arr = extremes.first_extreme(self._data, dims, keep, largest)
        return common.new(arr, self.dtype, self.device)
    lo, hi = extreme(False), extreme(True)
    attrs = {"dims": dims, "keepdim": keep, "min": lo, "max": hi}
    if self.dtype.is_floating_point and differentiable([self]):
        record_multi_output(AMINMAX, self, (lo, hi), attrs)
    # aminmax_jvp: amaxamin_jvp of each output
    forward_ad.record_tangent(extremes.AMIN, [self], lo, {"dim": dims, "keepdim": keep})
    forward_ad.record_tangent(extremes.AMAX, [self], hi, {"dim": dims, "keepdim": keep})
    return aminmax_return_type((lo, hi))


