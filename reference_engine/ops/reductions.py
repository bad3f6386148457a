"""Reductions: sum, mean (and sum_to, the engine's sum of a broadcast grad), prod,
amax/amin, max/min, argmax/argmin, var/var_mean, trace. Each entry follows its
derivatives.yaml formula and saved values."""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, forward_ad, messages, views, views_multi_output
from ..autograd_meta import OpSpec, differentiable, linear_forward, record
from ..dtypes import dtype
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor
from . import common, comparisons, copying, indexing, joining
from . import elementwise as ops
from .common import _compute, new, wrap_dim

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
    return tuple(wrap_dim(d, t.ndim) for d in dims) if t.ndim else ()


@np.errstate(all="ignore")   # inf + -inf is nan, silently, in torch
def _sum_array(a: np.ndarray, dt: dtype, dims: tuple[int, ...] | None = None,
               keepdim: bool = False) -> np.ndarray:
    """ATen's sum accumulates from +0.0: a sum of -0.0s (even of one) is +0.0. numpy
    starts from the first element and keeps -0.0; adding +0.0 turns only -0.0 into +0.0."""
    # np.add.reduce is the call np.sum makes, without np.sum's Python wrapper around it
    total = np.add.reduce(a, axis=dims, dtype=dt.np, keepdims=keepdim)  # type: ignore[call-overload]
    return total + dt.np.type(0)


@linear_forward(SUM0, SUM1)
def sum(self: Tensor, dim: int | Sequence[int] | None = None,
        keepdim: bool = False) -> Tensor:
    dt = self.dtype if self.dtype.is_floating_point else dtypes.int64
    if dim is None:
        out = new(_sum_array(self._data, dt), dt, self.device)
        return record(SUM0, out, [self], self_sym_sizes=self._data.shape)
    dims = _reduce_dims(self, dim)
    out = new(_sum_array(self._data, dt, dims, keepdim), dt, self.device)
    return record(SUM1, out, [self], dim=dims, keepdim=keepdim, self_sym_sizes=self._data.shape)


@linear_forward(MEAN0, MEAN1)
def mean(self: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
         dtype: dtype | None = None) -> Tensor:
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(messages.mean_optional_dtype(dtype.scalar_name))
    if not self.dtype.is_floating_point:
        raise RuntimeError(messages.mean_dtype(self.dtype.scalar_name))
    if dtype is not None and dtype is not self.dtype:
        raise NotImplementedError(messages.MEAN_DTYPE_NOT_MODELLED)
    if dim is None:
        total = _sum_array(self._data, self.dtype)
        out = new(_compute(lambda t: t / self.numel(), total), self.dtype, self.device)
        return record(MEAN0, out, [self], self_sym_sizes=self._data.shape,
                      self_sym_numel=self.numel())
    dims = _reduce_dims(self, dim)
    count = int(np.prod([self.shape[d] for d in dims])) if self.ndim else 1
    # mean is sum / count, so a mean of -0.0s is +0.0 too.
    total = _sum_array(self._data, self.dtype, dims, keepdim)
    out = new(_compute(lambda t: t / count, total), self.dtype, self.device)
    return record(MEAN1, out, [self], dim=dims, keepdim=keepdim,
                  self_sym_sizes=self._data.shape, count=count)


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


# ---- prod -------------------------------------------------------------------------------

def _prod_safe_zeros_backward(g: Tensor, x: Tensor, dim: int) -> Tensor:
    """grad * exclusive cumprod from the front * exclusive cumprod from the back: safe with
    zeros, and differentiable again (FunctionsManual prod_safe_zeros_backward)."""
    from .scans import _flip, cumprod  # scans builds on this module
    if x.numel() == 0:
        return views.expand(g, tuple(x.shape))
    ones_shape = list(x.shape)
    ones_shape[dim] = 1
    ones = common.new(np.ones(ones_shape), g.dtype, g.device)
    n = x.shape[dim]
    normal = cumprod(joining.cat([ones, views.narrow(x, dim, 0, n - 1)], dim), dim)
    rev = joining.cat([ones, _flip(views.narrow(x, dim, 1, n - 1), dim)], dim)
    return ops.mul(g, ops.mul(normal, _flip(cumprod(rev, dim), dim)))


def _prod_backward(c: Any, g: Tensor) -> Tensor:
    """FunctionsManual prod_backward: grad * result / self without zeros; with some,
    prod_safe_zeros_backward (of the flattened input without dim: and with more than one
    zero outside grad mode, zeros)."""
    x, result = c.self, c.result
    if x.dtype != g.dtype:
        x = copying.to(x, g.dtype)
    if x.ndim == 0:
        return g
    if c.dim is not None and not c.keepdim:
        g, result = views.unsqueeze(g, c.dim), views.unsqueeze(result, c.dim)
    zeros = int(np.count_nonzero(x._data == 0))
    if zeros == 0:
        return ops.mul(g, ops.div(result, x))
    if c.dim is not None:
        return _prod_safe_zeros_backward(g, x, c.dim)
    if zeros > 1 and not is_grad_enabled():
        return common.zeros_like(x)
    flat = views.view(x if x.is_contiguous() else copying.clone(x), (-1,))
    return views.view(_prod_safe_zeros_backward(g, flat, 0), tuple(x.shape))
def _prod_jvp(c: Any) -> Tensor:
    """(prod_backward(ones_like(result), self, result[, dim, keepdim]) * self_t).sum([dim,
    keepdim])"""
    ones = common.new(np.ones(c.result.shape), c.result.dtype, c.result.device)
    terms = ops.mul(_prod_backward(c, ones), c.self_t)
    return sum(terms) if c.dim is None else sum(terms, c.dim, c.keepdim)


PROD0 = OpSpec("ProdBackward0", ("self",), {"self": ("self", "result")},
               lambda c, g: [_prod_backward(c, g)], jvp=_prod_jvp)
PROD1 = OpSpec("ProdBackward1", ("self",), {"self": ("self", "result")},
               lambda c, g: [_prod_backward(c, g)], jvp=_prod_jvp)


def prod(self: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: dtype | None = None) -> Tensor:
    dt = dtype or (self.dtype if self.dtype.is_floating_point else dtypes.int64)
    if dim is None:
        out = common.new(common._compute(lambda a: np.prod(a, dtype=dt.np), self._data), dt,
                      self.device)
        return record(PROD0, out, [self], dim=None, keepdim=False)
    d = common.wrap_dim(dim, self.ndim)
    out = common.new(common._compute(lambda a: np.prod(a, axis=d, keepdims=keepdim, dtype=dt.np),
                               self._data), dt, self.device)
    return record(PROD1, out, [self], dim=d, keepdim=keepdim)


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
def _evenly_read_jvp(x: Tensor, x_t: Tensor, result: Tensor, dims: tuple[int, ...] | None,
                     keepdim: bool) -> Tensor:
    """amaxamin_jvp / evenly_read_jvp: the mean of the tangent over the elements that equal
    the result, (self_t * mask).sum(dims) / mask.sum(dims)."""
    if dims is None:
        mask = copying.to(comparisons.compare(x, result, np.equal), x_t.dtype)
        return ops.div(sum(ops.mul(x_t, mask)), sum(mask))
    r = restore_reduced_dims(result, dims, keepdim, x.ndim)
    mask = copying.to(comparisons.compare(x, r, np.equal), x_t.dtype)
    return ops.div(sum(ops.mul(x_t, mask), dims, keepdim), sum(mask, dims, keepdim))


AMAX = OpSpec("AmaxBackward0", ("self",), {"self": ("self", "result")},
              lambda c, g: [_amax_backward(c, g)],
              jvp=lambda c: _evenly_read_jvp(c.self, c.self_t, c.result, c.dim, c.keepdim))
AMIN = OpSpec("AminBackward0", ("self",), {"self": ("self", "result")},
              lambda c, g: [_amax_backward(c, g)],
              jvp=lambda c: _evenly_read_jvp(c.self, c.self_t, c.result, c.dim, c.keepdim))


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
    moved = np.transpose(a, keep + order).reshape([a.shape[d] for d in keep] + [-1])
    pick = (np.argmax if largest else np.argmin)(moved, axis=-1)   # first max, or first NaN
    out = np.take_along_axis(moved, pick[..., None], -1)[..., 0]
    return np.expand_dims(out, dims) if keepdim else out


def _extreme(spec: OpSpec, largest: bool, self: Tensor, dim: Dims, keepdim: bool,
             out: Tensor | None = None) -> Tensor:
    name = "amax" if largest else "amin"
    if out is not None and out.dtype is not self.dtype:
        raise RuntimeError(messages.out_dtype_match(self.dtype.scalar_name,
                                                    out.dtype.scalar_name))
    dims = _dims(self, dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(messages.dim_repeated(next(d for d in dims if dims.count(d) > 1)))
    if self.numel() == 0:
        if dim is None or (not isinstance(dim, int) and len(dim) == 0):
            raise RuntimeError(messages.reduction_dim_unspecified(name + "()"))
        empty = [d for d in dims if self.shape[d] == 0]
        if empty:
            raise IndexError(messages.reduction_dim_empty(name + "()", empty[0]))
    if out is not None:
        return common.into_out(name, out, [self],
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


def _evenly_distribute(c: Any, g: Tensor) -> Tensor:
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


def _select_backward(c: Any, g: Tensor) -> Tensor:
    """value_selecting_reduction_backward: zeros(sizes).scatter(dim, indices, grad)."""
    idx = c.indices
    if not c.keepdim and len(c.self_sym_sizes) > 0:
        g = views.unsqueeze(g, c.dim)
        idx = views.unsqueeze(idx, c.dim)
    zeros = common.new(np.zeros(c.self_sym_sizes), g.dtype, g.device)
    return common.written_in_place(indexing.scatter(zeros, c.dim, idx, g), 2)
def _select_jvp(c: Any) -> Tensor:
    """gather_with_keepdimed_indices(self_t, dim, indices, keepdim)"""
    if c.self.ndim == 0:
        return copying.clone(c.self_t)
    idx = c.indices if c.keepdim else views.unsqueeze(c.indices, c.dim)
    out = indexing.gather(c.self_t, c.dim, idx)
    return out if c.keepdim else views.squeeze(out, c.dim)


MAX0 = OpSpec("MaxBackward0", ("self",), {"self": ("indices",)},
              lambda c, g: [_select_backward(c, g)], jvp=_select_jvp)
MIN0 = OpSpec("MinBackward0", ("self",), {"self": ("indices",)},
              lambda c, g: [_select_backward(c, g)], jvp=_select_jvp)
MAX1 = OpSpec("MaxBackward1", ("self",), {"self": ("self", "result")},
              lambda c, g: [_evenly_distribute(c, g)],
              jvp=lambda c: _evenly_read_jvp(c.self, c.self_t, c.result, None, False))
MIN1 = OpSpec("MinBackward1", ("self",), {"self": ("self", "result")},
              lambda c, g: [_evenly_distribute(c, g)],
              jvp=lambda c: _evenly_read_jvp(c.self, c.self_t, c.result, None, False))


def _max_min(self: Tensor, dim: Any, keepdim: bool, largest: bool) -> Any:
    if isinstance(dim, Tensor):   # torch.max(a, b) is maximum(a, b)
        return comparisons.maximum(self, dim) if largest else comparisons.minimum(self, dim)
    if dim is None:
        fn = np.max if largest else np.min
        out = common.new(fn(self._data), self.dtype, self.device)
        return record(MAX1 if largest else MIN1, out, [self])
    d = common.wrap_dim(dim, self.ndim)
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
    pick = np.argmax if largest else np.argmin
    if dim is None:
        idx = np.asarray(pick(self._data.reshape(-1)), dtype=np.int64)
        if keepdim:
            idx = idx.reshape((1,) * self.ndim)
        return common.new(idx, dtypes.int64, self.device)
    d = common.wrap_dim(dim, self.ndim)
    data = self._data.reshape(1) if self.ndim == 0 else self._data
    idx = np.asarray(pick(data, axis=d if self.ndim else 0), dtype=np.int64)
    if keepdim and self.ndim:
        idx = np.expand_dims(idx, d)
    return common.new(idx, dtypes.int64, self.device)


def argmax(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg_extreme(self, dim, keepdim, largest=True)


def argmin(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg_extreme(self, dim, keepdim, largest=False)


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
    """var_backward(self_t, self, dim, correction, keepdim=True).sum(dim or all, keepdim)"""
    terms = _var_backward(c.self_t, c.self, c.dim, c.correction, True)
    return sum(terms) if not c.dim else sum(terms, c.dim, c.keepdim)


VAR = OpSpec("VarBackward0", ("self",), {"self": ("self",)},
             lambda c, g: [_var_backward(g, c.self, c.dim, c.correction, c.keepdim)],
             jvp=_var_jvp)
VAR_MEAN = OpSpec("VarMeanBackward0", ("self",), {"self": ("self",)},
                  _var_mean_backward)  # type: ignore[arg-type]


def _var_args(self: Tensor, dim: Any, unbiased: bool | None, correction: float | None
              ) -> tuple[tuple[int, ...] | None, float]:
    """torch.var's overloads: var(x, unbiased), var(x, dim, unbiased, keepdim) and
    var(x, dim, *, correction, keepdim); an empty dim list reduces every dim."""
    if not self.dtype.is_floating_point:
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
    # once: in float32 the two-pass sum came out an ulp off (found by the generator)
    a = self._data.astype(np.float64)
    with np.errstate(all="ignore"):
        mean = np.mean(a, axis=axis, keepdims=True)
        var = np.sum((a - mean) ** 2, axis=axis, keepdims=keepdim) / (n - correction)
        var = np.sqrt(var) if sqrt else var
    if not keepdim:
        mean = np.squeeze(mean, axis) if axis is not None else mean.reshape(())
    return np.asarray(var, self._data.dtype), np.asarray(mean, self._data.dtype)


def var(self: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
        *, correction: float | None = None) -> Tensor:
    dims, corr = _var_args(self, dim, unbiased, correction)
    v, _ = _var_values(self, dims, corr, keepdim, "var")
    return record(VAR, common.new(v, self.dtype, self.device), [self], dim=dims,
                  correction=corr, keepdim=keepdim)


def var_mean(self: Tensor, dim: Any = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: float | None = None
             ) -> tuple[Tensor, Tensor]:
    """(var, mean), both outputs of one VarMeanBackward0 node."""
    dims, corr = _var_args(self, dim, unbiased, correction)
    v, m = _var_values(self, dims, corr, keepdim, "var_mean")
    outs = (common.new(v, self.dtype, self.device), common.new(m, self.dtype, self.device))
    if differentiable([self]):
        views_multi_output.record_multi_output(VAR_MEAN, self, outs,
                                  {"dim": dims, "correction": corr, "keepdim": keepdim})
    # the two outputs' tangents: result0 as var's, result1 mean(self_t, dim, keepdim)
    attrs = {"dim": dims, "correction": corr, "keepdim": keepdim}
    forward_ad.record_tangent(VAR, [self], outs[0], attrs)
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
    dt = self.dtype if self.dtype.is_floating_point else dtypes.int64
    out = common.new(np.trace(self._data).astype(dt.np), dt, self.device)
    return record(TRACE, out, [self], self_sym_sizes=tuple(self.shape))
