"""torch.masked's reductions and normalizations on strided tensors (torch/masked/_ops.py).

torch writes each in Python on other ops: the input's masked-out elements are replaced by
the reduction's identity (`where(mask, input, identity)`, the mask broadcast to the input),
then the plain op reduces. Each is written here in the same engine ops, one for one, so its
graph names torch's nodes. `mask=None` is an all-true mask (no where). A `dtype` other than
the input's is not modelled (torch converts on the way; the samples pass none)."""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..tensor import Tensor
from . import (
    binary_math,
    extremes,
    losses,
    norms,
    prod_cumprod,
    scans,
    shape_views,
    sorting,
    statistics,
)
from . import nn as nn_ops
from .basic import comparisons, copying, to_copy, views
from .basic import elementwise as ops
from .basic import reductions as red
from .common import new

Dims = Any   # an int, a tuple of ints, () or None (every dim)


def _canonical_dim(dim: Dims, ndim: int) -> tuple[int, ...]:
    """The dims as a sorted tuple; None and () are every dim."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    ndim = builtins.max(ndim, 1)
    seen: list[int] = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in seen:
            raise RuntimeError(messages.masked_dim_repeated(d))
        if d >= ndim or d < -ndim:
            raise IndexError(messages.masked_dim_out_of_range(ndim, d))
        seen.append(d % ndim)
    return tuple(sorted(seen))


def _input_mask(input: Tensor, mask: Tensor) -> Tensor:
    """The mask as a bool tensor of input's shape: itself, or a broadcast view of its clone
    (never to fewer dims); where() saves it, a view or not as torch's."""
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError(messages.MASKED_MASK_DIMS)
        mask = shape_views.broadcast_to(copying.clone(mask), tuple(input.shape))
    return to_copy.to(mask, dtype=dtypes.bool_)


def _identity(op: str, input: Tensor, ord: float = 2.0) -> Tensor:
    """The reduction's identity, a 0-d tensor of input's dtype (float inputs)."""
    if op in ("sum", "cumsum"):
        value = 0.0
    elif op in ("prod", "cumprod"):
        value = 1.0
    elif op in ("amax", "logaddexp", "logsumexp"):
        value = -math.inf
    elif op == "amin":
        value = math.inf
    elif op == "norm":
        value = math.inf if ord == -math.inf else 0.0
    else:   # median
        value = math.nan
    return new(np.asarray(value, dtype=input.dtype.np), input.dtype, input.device)


def _combine(op: str, input: Tensor, mask: Tensor | None, ord: float = 2.0) -> Tensor:
    """torch's _combine_input_and_mask: where(mask, input, identity), or input itself."""
    if mask is None:
        return input
    return comparisons.where(_input_mask(input, mask), input, _identity(op, input, ord))


def _float_input(input: Tensor, dtype: Any, op: str) -> None:
    if dtype is not None and dtype is not input.dtype:
        raise NotImplementedError(messages.masked_dtype_not_modelled(op))
    if not input.dtype.is_floating_point:
        raise NotImplementedError(messages.masked_dtype_not_modelled(op))


def sum(input: Tensor, dim: Dims = None, *, keepdim: bool | None = False,
        dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    _float_input(input, dtype, "sum")
    dims = _canonical_dim(dim, input.ndim)
    return red.sum(_combine("sum", input, mask), dims, bool(keepdim))


def prod(input: Tensor, dim: Dims = None, *, keepdim: bool | None = False,
         dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """One prod per dim, the last first (torch's workaround of its issue 56586)."""
    _float_input(input, dtype, "prod")
    dims = _canonical_dim(dim, input.ndim)
    result = _combine("prod", input, mask)
    for d in reversed(dims):
        result = prod_cumprod.prod(result, d, bool(keepdim))
    return result


def cumsum(input: Tensor, dim: int, *, dtype: Any = None,
           mask: Tensor | None = None) -> Tensor:
    _float_input(input, dtype, "cumsum")
    d = _canonical_dim(dim, input.ndim)[0]
    return scans.cumsum(_combine("sum", input, mask), d, dtype=input.dtype)


def cumprod(input: Tensor, dim: int, *, dtype: Any = None,
            mask: Tensor | None = None) -> Tensor:
    _float_input(input, dtype, "cumprod")
    d = _canonical_dim(dim, input.ndim)[0]
    return prod_cumprod.cumprod(_combine("prod", input, mask), d, dtype=input.dtype)


def amax(input: Tensor, dim: Dims = None, *, keepdim: bool | None = False,
         dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    _float_input(input, dtype, "amax")
    masked = _combine("amax", input, mask)
    return extremes.amax(masked, _canonical_dim(dim, masked.ndim), bool(keepdim))


def amin(input: Tensor, dim: Dims = None, *, keepdim: bool | None = False,
         dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    _float_input(input, dtype, "amin")
    masked = _combine("amin", input, mask)
    return extremes.amin(masked, _canonical_dim(dim, masked.ndim), bool(keepdim))


def _count(input: Tensor, mask: Tensor | None, dim: Dims, keepdim: bool) -> Tensor:
    """The number of masked-in elements over dim (int64, no grad): torch's sum of ones (or
    of the mask) over the same dims."""
    arr = np.ones(tuple(input.shape), bool) if mask is None else mask._data
    dims = _canonical_dim(dim, input.ndim) if mask is None else \
        red.reduced_dims(mask, dim)   # Tensor.sum(dim=dim): None and () are every dim
    if arr.ndim == 0:
        dims = ()   # a 0-d tensor's dim 0 is itself
    counted = np.sum(arr, axis=dims, keepdims=keepdim, dtype=np.int64)
    return new(np.asarray(counted), dtypes.int64, input.device)


def mean(input: Tensor, dim: Dims = None, *, keepdim: bool | None = False,
         dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """sum / count, both masked."""
    _float_input(input, dtype, "mean")
    inmask = None if mask is None else _input_mask(input, mask)
    count = _count(input, inmask, dim, bool(keepdim))
    total = sum(input, dim, keepdim=keepdim, mask=inmask)
    return ops.div(total, count)


def median(input: Tensor, dim: int = -1, *, keepdim: bool = False, dtype: Any = None,
           mask: Tensor | None = None) -> Tensor:
    """nanmedian over dim of the input with nan where masked out."""
    _float_input(input, dtype, "median")
    d = _canonical_dim(dim, input.ndim)[0]
    return sorting.nanmedian(_combine("median", input, mask), d, keepdim).values


def logsumexp(input: Tensor, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None,
              mask: Tensor | None = None) -> Tensor:
    _float_input(input, dtype, "logsumexp")
    dims = _canonical_dim(dim, input.ndim)
    return statistics.logsumexp(_combine("logsumexp", input, mask), dims, keepdim)


def logaddexp(input: Tensor, other: Tensor, *, dtype: Any = None,
              input_mask: Tensor | None = None, other_mask: Tensor | None = None) -> Tensor:
    _float_input(input, dtype, "logaddexp")
    return binary_math.logaddexp(_combine("logaddexp", input, input_mask),
                                 _combine("logaddexp", other, other_mask))


def norm(input: Tensor, ord: float | None = 2.0, dim: Dims = None, *,
         keepdim: bool | None = False, dtype: Any = None,
         mask: Tensor | None = None) -> Tensor:
    _float_input(input, dtype, "norm")
    p = 2.0 if ord is None else float(ord)
    masked = _combine("norm", input, mask, p)
    return norms.vector_norm(masked, p, _canonical_dim(dim, input.ndim), bool(keepdim))


def _std_var(input: Tensor, dim: Dims, unbiased: bool | None, correction_opt: float | None,
             keepdim: bool, dtype: Any, mask: Tensor | None, take_sqrt: bool,
             op: str) -> Tensor:
    """torch's _std_var: the masked mean (kept dims), the masked sum of squared deviations,
    divided by max(count - correction, 0) (the count an int64 tensor when correction is 0)."""
    _float_input(input, dtype, op)
    if unbiased is not None and correction_opt is not None:
        raise AssertionError(messages.MASKED_UNBIASED_AND_CORRECTION)
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    inmask = None if mask is None else _input_mask(input, mask)
    count = _count(input, inmask, dim, True)
    sample_mean = ops.div(sum(input, dim, keepdim=True, mask=inmask), count)
    x = ops.sub(input, sample_mean)
    total = sum(ops.mul(x, x), dim, keepdim=keepdim, mask=inmask)
    if not keepdim:
        count = views.reshape(count, tuple(total.shape))   # a view: both divisions save it
    if correction != 0:
        real = np.maximum(count._data.astype(input.dtype.np) -
                          input.dtype.np.type(correction), 0)
        count = new(real, input.dtype, input.device)
    output = ops.div(total, count)
    return ops.sqrt(output) if take_sqrt else output


def var(input: Tensor, dim: Dims = None, unbiased: bool | None = None, *,
        correction: float | None = None, keepdim: bool | None = False, dtype: Any = None,
        mask: Tensor | None = None) -> Tensor:
    return _std_var(input, dim, unbiased, correction, bool(keepdim), dtype, mask, False, "var")


def std(input: Tensor, dim: Dims = None, unbiased: bool | None = None, *,
        correction: float | None = None, keepdim: bool | None = False, dtype: Any = None,
        mask: Tensor | None = None) -> Tensor:
    return _std_var(input, dim, unbiased, correction, bool(keepdim), dtype, mask, True, "std")


def softmax(input: Tensor, dim: int, *, dtype: Any = None,
            mask: Tensor | None = None) -> Tensor:
    _float_input(input, dtype, "softmax")
    d = _canonical_dim(dim, input.ndim)[0]
    return nn_ops.softmax(_combine("amax", input, mask), d, input.dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None,
                mask: Tensor | None = None) -> Tensor:
    _float_input(input, dtype, "log_softmax")
    d = _canonical_dim(dim, input.ndim)[0]
    return nn_ops.log_softmax(_combine("amax", input, mask), d, input.dtype)


def softmin(input: Tensor, dim: int, *, dtype: Any = None,
            mask: Tensor | None = None) -> Tensor:
    _float_input(input, dtype, "softmin")
    d = _canonical_dim(dim, input.ndim)[0]
    return losses.softmin(_combine("amin", input, mask), d, dtype=input.dtype)


def normalize(input: Tensor, ord: float, dim: int, *, eps: float = 1e-12, dtype: Any = None,
              mask: Tensor | None = None) -> Tensor:
    """input (masked-out elements 0) / max(masked norm, eps)."""
    _float_input(input, dtype, "normalize")
    masked = _combine("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, mask=mask)
    eps_t = new(np.asarray(eps, dtype=nrm.dtype.np), nrm.dtype, nrm.device)
    return ops.div(masked, extremes.maximum(nrm, eps_t))

