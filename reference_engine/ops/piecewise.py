"""torch's piecewise elementwise ops (issue 24): sign and sgn, the roundings (trunc, floor,
ceil, round, frac), positive, nan_to_num, clamp_min / clamp_max and clamp with tensor
bounds. Their gradients are zeros, the incoming grad, or the grad masked where a bound or
a non-finite value wins, as derivatives.yaml writes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..grad_mode import no_grad
from ..tensor import Tensor
from . import common, kernels
from .backward import (  # sgn: abs's gradient's op, exported under its name here
    SGN,
    sgn,
    sign_kernel,
)
from .basic import comparisons
from .basic.comparisons import compare, where
from .basic.elementwise import mul, refuse_complex_clamp
from .basic.inplace import apply_inplace
from .common import (
    Number,
    check_tensor_or_number,
    elementwise_op,
    new,
    result_dtype,
    wrap,
    zeros_like,
    zeros_scalar,
)
from .unary_math import inplace_variant, unary_spec

# ---- sign and rounding: zero gradients ----------------------------------------------------

def _zeros(c: Any, g: Tensor) -> Tensor:
    return zeros_like(g)


SIGN = unary_spec("SignBackward0", (), _zeros)
TRUNC = unary_spec("TruncBackward0", (), _zeros)
FLOOR = unary_spec("FloorBackward0", (), _zeros)
CEIL = unary_spec("CeilBackward0", (), _zeros)
ROUND = unary_spec("RoundBackward0", (), _zeros)
ROUND_DECIMALS = unary_spec("RoundBackward1", (), _zeros)
# frac: `self: grad`, `result: self_t`
FRAC = unary_spec("FracBackward0", (), lambda c, g: g, jvp=lambda c: c.self_t)


def sign(self: Tensor) -> Tensor:
    if self.dtype is dtypes.bool_:
        return new(self._data, self.dtype, self.device)
    return elementwise_op(SIGN, sign_kernel, (self,))


def trunc(self: Tensor) -> Tensor:
    return elementwise_op(TRUNC, np.trunc, (self,))


def floor(self: Tensor) -> Tensor:
    return elementwise_op(FLOOR, np.floor, (self,))


def ceil(self: Tensor) -> Tensor:
    return elementwise_op(CEIL, np.ceil, (self,))


def frac(self: Tensor) -> Tensor:
    common.floating_kernel("frac_cpu", self)
    return elementwise_op(FRAC, lambda a: a - np.trunc(a), (self,))


def _round_decimals(decimals: int) -> Callable[[np.ndarray], np.ndarray]:
    """ATen's round_decimals kernel: nearbyint(x * 10^d) / 10^d, or for negative decimals
    nearbyint(x / 10^-d) * 10^-d, in the tensor's dtype."""
    def fn(a: np.ndarray) -> np.ndarray:
        ten_pow = a.dtype.type(10.0 ** abs(decimals))
        if decimals < 0:
            return np.rint(a / ten_pow) * ten_pow
        return np.rint(a * ten_pow) / ten_pow
    return fn


def round(self: Tensor, *, decimals: int | None = None) -> Tensor:
    """round.decimals is torch's overload whenever decimals is given, 0 included."""
    if decimals is None:
        return elementwise_op(ROUND, np.rint, (self,))
    return elementwise_op(ROUND_DECIMALS, _round_decimals(decimals), (self,), decimals=decimals)


def positive(self: Tensor) -> Tensor:
    """CompositeImplicit: self itself (no node); a bool tensor is refused."""
    if self.dtype is dtypes.bool_:
        raise RuntimeError(messages.POSITIVE_BOOL)
    return self



# ---- nan_to_num, clamp_min, clamp_max -----------------------------------------------------

# grad * at::isfinite(self)
NAN_TO_NUM = unary_spec("NanToNumBackward0", ("self",),
                        lambda c, g: mul(g, new(np.isfinite(c.self._data), dtypes.bool_,
                                                c.self.device)))


def nan_to_num(self: Tensor, nan: float | None = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    if not self.dtype.is_floating_point:
        return new(self._data, self.dtype, self.device)
    info = np.finfo(self.dtype.np)

    def fn(a: np.ndarray) -> np.ndarray:
        out = np.where(np.isnan(a), a.dtype.type(0.0 if nan is None else nan), a)
        out = np.where(np.isposinf(a), a.dtype.type(info.max if posinf is None else posinf), out)
        return np.where(np.isneginf(a), a.dtype.type(info.min if neginf is None else neginf), out)
    return elementwise_op(NAN_TO_NUM, fn, (self,))


CLAMP_MIN = unary_spec("ClampMinBackward0", ("self",),
                       lambda c, g: where(compare(c.self, c.min, np.greater_equal), g,
                                          zeros_scalar(g)))
CLAMP_MAX = unary_spec("ClampMaxBackward0", ("self",),
                       lambda c, g: where(compare(c.self, c.max, np.less_equal), g,
                                          zeros_scalar(g)))
CLAMP_MIN_T = OpSpec(
    "ClampMinBackward1", ("self", "min"), {"self": ("self", "min"), "min": ("self", "min")},
    lambda c, g: c.grads(lambda: where(compare(c.self, c.min, np.greater_equal), g,
                                       zeros_scalar(g)),
                         lambda: where(compare(c.self, c.min, np.less), g, zeros_scalar(g))),
    jvp=lambda c: where(compare(c.self, c.min, np.greater_equal), c.self_t, c.min_t))
CLAMP_MAX_T = OpSpec(
    "ClampMaxBackward1", ("self", "max"), {"self": ("self", "max"), "max": ("self", "max")},
    lambda c, g: c.grads(lambda: where(compare(c.self, c.max, np.less_equal), g,
                                       zeros_scalar(g)),
                         lambda: where(compare(c.self, c.max, np.greater), g, zeros_scalar(g))),
    jvp=lambda c: where(compare(c.self, c.max, np.less_equal), c.self_t, c.max_t))


def _clamp_to(keep: Callable[..., Any]) -> Callable[..., np.ndarray]:
    """ATen's clamp_min / clamp_max: NaN stays NaN (in either operand), a bound equal to x
    leaves x."""
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_arrays(a, b)
        return np.where(np.isnan(b), b, np.where(keep(a, b) | np.isnan(a), a, b))
    return fn


def _clamp_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """clamp_backward (self) and clamp_backward_min_max (min, max): the subgradient 1 at the
    bounds for self; a bound's grad where it wins (min none where min > max)."""
    x, lo, hi = c.self, c.min, c.max
    zero = zeros_scalar(g)

    def self_grad() -> Tensor:
        keep = None
        if lo is not None:
            keep = compare(x, lo, np.greater_equal)
        if hi is not None:
            below = compare(x, hi, np.less_equal)
            keep = below if keep is None else compare(keep, below, np.logical_and)
        return g if keep is None else where(keep, g, zero)

    def min_grad() -> Tensor:
        wins = compare(x, lo, np.less)
        if hi is not None:
            wins = compare(wins, compare(lo, hi, np.less), np.logical_and)
        return where(wins, g, zero)

    def max_grad() -> Tensor:
        wins = compare(x, hi, np.greater)
        if lo is not None:
            wins = compare(wins, compare(hi, lo, np.less), np.logical_or)
        return where(wins, g, zero)
    return c.grads(self_grad, min_grad, max_grad)


def _clamp_jvp(c: Any) -> Tensor:
    """clamp_jvp(self_p, self_t, min_p, min_t, max_p, max_t)"""
    x, lo, hi = c.self, c.min, c.max
    if lo is not None and hi is not None:
        inner = where(compare(x, lo, np.less), c.min_t,
                      where(compare(x, hi, np.greater), c.max_t, c.self_t))
        return where(compare(lo, hi, np.greater), c.max_t, inner)
    if lo is not None:
        return where(compare(x, lo, np.greater), c.self_t, c.min_t)
    if hi is not None:
        return where(compare(x, hi, np.less), c.self_t, c.max_t)
    return c.self_t


CLAMP_TENSOR = OpSpec("ClampBackward0", ("self", "min", "max"),
                      {n: ("self", "min", "max") for n in ("self", "min", "max")},
                      _clamp_backward, jvp=_clamp_jvp)


def clamp_tensor(self: Tensor, min: Tensor | None, max: Tensor | None) -> Tensor:
    """clamp.Tensor: min(max(self, min), max) as std::min/std::max take them (a bound equal
    to x leaves x), NaN where a bound is NaN."""
    bounds = [b for b in (min, max) if b is not None]

    def fn(a: np.ndarray, *bs: np.ndarray) -> np.ndarray:
        it = iter(bs)
        lo = next(it) if min is not None else None
        hi = next(it) if max is not None else None
        out = a
        if lo is not None:
            out = np.where(np.isnan(lo), lo, np.where(out < lo, lo, out))
        if hi is not None:
            out = np.where(np.isnan(hi), hi, np.where(hi < out, hi, out))
        return out
    out = elementwise_op(None, fn, [self, *bounds])
    # an absent bound is an attribute None (the formulas test it), a present one is saved
    absent = {k: None for k, b in (("min", min), ("max", max)) if b is None}
    return record(CLAMP_TENSOR, out, [self, min, max], **absent)


def _bounded(name: str, tensor_spec: OpSpec, scalar_spec: OpSpec, keep: Callable[..., Any],
             self: Tensor, bound: Tensor | Number) -> Tensor:
    """clamp_min / clamp_max: .Tensor (the bound an input) or the Scalar overload."""
    param = name.removeprefix("clamp_")
    check_tensor_or_number(name, self, bound, param)
    if isinstance(bound, Tensor):
        if self.dtype.is_complex or bound.dtype.is_complex:   # clamp_min.Tensor is maximum
            kernel = "maximum_cpu" if name == "clamp_min" else "minimum_cpu"
            dt = result_dtype([self, bound])
            raise NotImplementedError(messages.kernel_not_implemented(kernel, dt.scalar_name))
        return elementwise_op(tensor_spec, _clamp_to(keep), (self, bound))
    refuse_complex_clamp(self)
    attrs: dict[str, Any] = {param: bound}
    return elementwise_op(scalar_spec, lambda a: _clamp_to(keep)(a, np.asarray(bound, a.dtype)),
                          (self,), compute_dtype=result_dtype([self, wrap(bound)]), **attrs)


def clamp_min(self: Tensor, min: Tensor | Number) -> Tensor:
    return _bounded("clamp_min", CLAMP_MIN_T, CLAMP_MIN, np.greater_equal, self, min)


def clamp_max(self: Tensor, max: Tensor | Number) -> Tensor:
    return _bounded("clamp_max", CLAMP_MAX_T, CLAMP_MAX, np.less_equal, self, max)


# in-place forms (see unary_math.inplace_variant)
sign_ = inplace_variant(SIGN, sign)
sgn_ = inplace_variant(SGN, sgn)
trunc_ = inplace_variant(TRUNC, trunc)
floor_ = inplace_variant(FLOOR, floor)
ceil_ = inplace_variant(CEIL, ceil)
frac_ = inplace_variant(FRAC, frac)


# ---- clamp (Scalar bounds; clamp.Tensor is clamp_tensor above) ----------------------------

CLAMP = OpSpec("ClampBackward1", ("self",), {"self": ("self",)},
               lambda c, g: [comparisons.where(_clamp_mask(c.self, c.min, c.max), g,
                                               zeros_scalar(g))],
               jvp="auto_element_wise")


def _clamp_mask(x: Tensor, lo: Number | None, hi: Number | None) -> Tensor:
    mask = np.ones(x.shape, dtype=bool)
    if lo is not None:
        mask &= x._data >= lo
    if hi is not None:
        mask &= x._data <= hi
    # (self >= min).logical_and_(self <= max): laid out as self
    return common.iterator_result(mask, dtypes.bool_, x.device, [x])

def clamp(self: Tensor, min: Tensor | Number | None = None,
          max: Tensor | Number | None = None) -> Tensor:
    refuse_complex_clamp(self)
    if isinstance(min, Tensor) or isinstance(max, Tensor):   # clamp.Tensor
        def bound(b: Tensor | Number | None) -> Tensor | None:
            return None if b is None else wrap(b)
        return clamp_tensor(self, bound(min), bound(max))
    # the Scalar bounds take part in type promotion: an integer tensor clamped to float
    # bounds gives the default float dtype (clamp(int32 tensor, -0.5, 0.5) is float32)
    dt = result_dtype([self, *(wrap(b) for b in (min, max) if b is not None)])
    return elementwise_op(CLAMP, lambda a: kernels.clamp(a, min, max), (self,), out_dtype=dt,
                          compute_dtype=dt, min=min, max=max)


def clamp_(self: Tensor, min: float | None = None, max: float | None = None) -> Tensor:
    with no_grad():
        r = clamp(self, min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        # clamp_.Tensor: the bounds are inputs of ClampBackward0, as clamp.Tensor's
        bounds = [None if b is None else wrap(b) for b in (min, max)]
        absent = {k: None for k, b in (("min", min), ("max", max)) if b is None}
        return apply_inplace(self, CLAMP_TENSOR, r, bounds, **absent)
    return apply_inplace(self, CLAMP, r, [], min=min, max=max)
