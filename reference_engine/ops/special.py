"""torch.special (registry rows `special.<name>`): the forwards in NumPy on float64 values
(rounded once to the input's dtype), the backward formulas of derivatives.yaml in engine
ops, so a create_graph grad differentiates again through torch's nodes: C++'s Tensor-Scalar
arithmetic is the *_scalar ops (MulBackward1, SubBackward1), `Scalar - Tensor` wraps the
number (SubBackward0).
numpy has no special functions: erf and erfc come from Python's math, erfcx's tail from
its asymptotic series, ndtri from Acklam's rational approximation refined by Newton steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec
from ..tensor import Tensor
from . import backward as grad_ops
from . import common
from . import special_kernels as kernels
from .basic import comparisons, indexing, powers
from .basic import elementwise as ops
from .erf_gamma import i0, in_kernel_dtype  # torch.i0's row

Array = np.ndarray
_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_SQRT_PI = math.sqrt(math.pi)


def _unary(spec: OpSpec, fn: Callable[[Array], Array], self: Tensor) -> Tensor:
    return common.elementwise_op(spec, fn, (self,), out_dtype=common.float_dtype(self),
                                 compute_dtype=dtypes.float64)


# ---- erf (ndtr is ATen's composition 0.5 * (1 + erf(x / sqrt(2)))) -------------------

ERF = OpSpec("ErfBackward0", ("self",), {"self": ("self",)},
             # 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad
             lambda c, g: [ops.mul(ops.mul_scalar(ops.exp(ops.neg(powers.pow(c.self, 2))),
                                                  2 / _SQRT_PI), g)],
             jvp="auto_element_wise")


def erf(self: Tensor) -> Tensor:
    return _unary(ERF, _erf, self)


def ndtr(self: Tensor) -> Tensor:
    """(1 + erf(x * M_SQRT1_2)) * 0.5, each step ATen's Tensor-Scalar op."""
    return ops.mul_scalar(ops.add_scalar(erf(ops.mul_scalar(self, math.sqrt(0.5))), 1), 0.5)


# ---- erfcx and log_ndtr ------------------------------------------------------------

def _erfcx(x: Array) -> Array:
    """exp(x^2) erfc(x): directly below 25 (no underflow yet), else the asymptotic series
    1/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(2x^2)^2 - 15/(2x^2)^3 ...), exact to double there."""
    with np.errstate(all="ignore"):
        small = np.exp(x * x) * _erfc(np.where(x < 25, x, 0.0))
        big = np.where(x >= 25, x, 25.0)
        u = 1 / (2 * big * big)
        series = 1 - u * (1 - 3 * u * (1 - 5 * u * (1 - 7 * u)))
        # the series only for x >= 25: a nan takes the direct branch, nan as torch's
        return np.where(x >= 25, series / (big * _SQRT_PI), small)


ERFCX = OpSpec("SpecialErfcxBackward0", ("self",), {"self": ("self", "result")},
               # (2.0 * self * result - 2.0 / sqrt(M_PI)) * grad
               lambda c, g: [ops.mul(ops.sub_scalar(ops.mul(ops.mul_scalar(c.self, 2.0),
                                                            c.result), 2 / _SQRT_PI), g)],
               jvp="auto_element_wise")


def erfcx(self: Tensor) -> Tensor:
    return _unary(ERFCX, _erfcx, self)


def _log_ndtr(x: Array) -> Array:
    """ATen's calc_log_ndtr: log(erfcx(-t) / 2) - t * t below x = -1 (t = x * M_SQRT1_2),
    else log1p(-erfc(t) / 2). In x's dtype step by step where the rounding shows: a float32
    t * t is off by ~1e-7 * t^2, which the gradient, exp(-(result + x^2 / 2)), amplifies
    (torch's float32 grads differ from the exact ones by ~4e-6 at x = -8)."""
    t = x * x.dtype.type(math.sqrt(0.5))
    with np.errstate(all="ignore"):
        left = np.log(_erfcx(-t.astype(np.float64)) / 2).astype(x.dtype) - t * t
        return np.where(x < -1, left, np.log1p(-_erfc(t.astype(np.float64)) / 2))


LOG_NDTR = OpSpec("SpecialLogNdtrBackward0", ("self",), {"self": ("self", "result")},
                  # grad / sqrt(2 * M_PI) * (result + self.pow(2) / 2).neg().exp()
                  lambda c, g: [ops.mul(ops.div_scalar(g, math.sqrt(2 * math.pi)), ops.exp(
                      ops.neg(ops.add(c.result, ops.div_scalar(powers.pow(c.self, 2), 2)))))],
                  jvp="auto_element_wise")


def log_ndtr(self: Tensor) -> Tensor:
    dt = common.float_dtype(self)
    return common.elementwise_op(LOG_NDTR, _log_ndtr, (self,), out_dtype=dt, compute_dtype=dt)


# ---- ndtri: the inverse of ndtr ----------------------------------------------------

_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
      1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
      6.680131188771972e+01, -1.328068155288572e+01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
      -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
      3.754408661907416e+00)


def _poly(coefficients: tuple[float, ...], x: Array) -> Array:
    out = np.zeros_like(x)
    for c in coefficients:
        out = out * x + c
    return out


def _ndtri(p: Array) -> Array:
    """Acklam's approximation (relative error 1e-9), then Newton steps on ndtr(x) = p."""
    with np.errstate(all="ignore"):
        q = np.clip(p, 1e-300, 1 - 1e-16)
        low = np.sqrt(-2 * np.log(np.minimum(q, 1 - q)))
        tail = _poly(_C, low) / (_poly(_D, low) * low + 1)
        r = (q - 0.5) ** 2
        x = np.where(np.abs(q - 0.5) <= 0.5 - 0.02425,
                     (q - 0.5) * _poly(_A, r) / (_poly(_B, r) * r + 1),
                     np.where(q < 0.5, tail, -tail))
        for _ in range(3):
            error = 0.5 * _erfc(-x / math.sqrt(2)) - p
            x = x - error * math.sqrt(2 * math.pi) * np.exp(x * x / 2)
        x = np.where(p == 0, -np.inf, np.where(p == 1, np.inf, x))
        return np.where((p < 0) | (p > 1) | np.isnan(p), np.nan, x)


NDTRI = OpSpec("SpecialNdtriBackward0", ("self",), {"self": ("result",)},
               # grad * sqrt(2 * M_PI) * (result.square() / 2).exp()
               lambda c, g: [ops.mul(ops.mul_scalar(g, math.sqrt(2 * math.pi)),
                                     ops.exp(ops.div_scalar(powers.pow(c.result, 2), 2)))],
               jvp="auto_element_wise")


def ndtri(self: Tensor) -> Tensor:
    return _unary(NDTRI, _ndtri, self)


# ---- entr and xlog1py ---------------------------------------------------------------

def _entr(x: Array) -> Array:
    with np.errstate(all="ignore"):
        return np.where(x > 0, -x * np.log(x), np.where(x == 0, 0.0, np.where(
            np.isnan(x), x, -np.inf)))


ENTR = OpSpec("SpecialEntrBackward0", ("self",), {"self": ("self",)},
              # grad * (-(1 + self.log()))
              lambda c, g: [ops.mul(g, ops.neg(ops.add_scalar(ops.log(c.self), 1)))],
              jvp="auto_element_wise")


def entr(self: Tensor) -> Tensor:
    return _unary(ENTR, _entr, self)


def _xlog1py(x: Array, y: Array) -> Array:
    with np.errstate(all="ignore"):
        return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log1p(y))


def _xlog1py_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    def self_grad() -> Tensor:
        # at::xlog1py(grad, other).masked_fill((self == 0.) & (other <= -1.), 0.)
        mask = common.new((c.self._data == 0) & (c.other._data <= -1), dtypes.bool_,
                          c.self.device)
        return indexing.masked_fill(xlog1py(g, c.other), mask, 0.0)
    # grad * self / (other + 1): `other + 1` is add.Scalar (AddBackward1 under create_graph)
    return c.grads(self_grad, lambda: ops.div(ops.mul(g, c.self), ops.add_scalar(c.other, 1)))


def _xlog1py_jvp(c: Any) -> Tensor:
    """self_t * log1p(other) + other_t * self / (other + 1)."""
    return ops.add(ops.mul(c.self_t, xlog1py(common.new(1.0, c.self.dtype, c.self.device),
                                                     c.other)),
                   ops.div(ops.mul(c.other_t, c.self), ops.add_scalar(c.other, 1)))


XLOG1PY = OpSpec("SpecialXlog1PyBackward0", ("self", "other"),
                 {"self": ("self", "other"), "other": ("self", "other")},
                 _xlog1py_backward, jvp=_xlog1py_jvp)


def xlog1py(self: Any, other: Any) -> Tensor:
    if not isinstance(self, Tensor) and not isinstance(other, Tensor):
        got = ", ".join(type(v).__name__ for v in (self, other))
        raise TypeError(messages.xlog1py_arguments(got))
    a, b = common.wrap(self), common.wrap(other)
    dt = common.result_dtype([a, b])
    dt = dt if dt.is_floating_point else dtypes.get_default_dtype()
    return common.elementwise_op(XLOG1PY, _xlog1py, (a, b), out_dtype=dt,
                                 compute_dtype=dtypes.float64)


# ---- modified Bessel functions: i0 (for i1's gradient), i0e, i1, i1e -------------------

def _bessel(x: Array, order: int, scaled: bool) -> Array:
    """I_order(x) for order 0 or 1 (times exp(-|x|) if `scaled`): the power series (positive
    terms, no cancellation) up to |x| = 50, the asymptotic series of the scaled function
    beyond (e^|x| / sqrt(2 pi |x|) * sum_k (-1)^k prod_j (4 order^2 - (2j-1)^2) / (k! (8|x|)^k);
    I1 is odd)."""
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        small = np.minimum(ax, 50.0)
        term = np.ones_like(small) if order == 0 else small / 2
        total = term.copy()
        for k in range(1, 200):
            term = term * (small * small / 4) / (k * (k + order))
            total = total + term
        if scaled:
            total = total * np.exp(-small)
        big = np.maximum(ax, 50.0)
        coefficient, series = np.ones_like(big), np.ones_like(big)
        for k in range(1, 12):
            coefficient = coefficient * -(4 * order * order - (2 * k - 1) ** 2) / (k * 8 * big)
            series = series + coefficient
        tail = series / np.sqrt(2 * math.pi * big)
        if not scaled:
            tail = tail * np.exp(big)
        value = np.where(ax <= 50, total, tail)
        return value if order == 0 else np.where(x < 0, -value, value)


def _safe(x: Tensor) -> tuple[Tensor, Tensor]:
    """FunctionsManual's i1 backwards: where |x| is not above eps, the formula's 1/x is
    replaced (x by eps, the gradient by its limit 0.5)."""
    eps = float(np.finfo(x.dtype.np).eps)
    not_tiny = common.new(np.abs(x._data) > eps, dtypes.bool_, x.device)
    return not_tiny, comparisons.where(not_tiny, x, common.new(eps, x.dtype, x.device))


def _i1_limit(g: Tensor, not_tiny: Tensor, gradx: Tensor) -> Tensor:
    return ops.mul(g, comparisons.where(not_tiny, gradx,
                                        common.new(0.5, gradx.dtype, gradx.device)))


def _i1_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """i1_backward: i0(x) - result / x."""
    not_tiny, x = _safe(c.self)
    return [_i1_limit(g, not_tiny, ops.sub(i0(x), ops.mul(c.result, ops.reciprocal(x))))]


def _i1e_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """i1e_backward: i0e(x) - result * (sgn(x) + 1 / x)."""
    not_tiny, x = _safe(c.self)
    return [_i1_limit(g, not_tiny, ops.sub(i0e(x), ops.mul(
        c.result, ops.add(grad_ops.sgn(x), ops.reciprocal(x)))))]


def _i0e_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """grad * (special_i1e(self) - self.sgn() * result)."""
    return [ops.mul(g, ops.sub(i1e(c.self), ops.mul(grad_ops.sgn(c.self), c.result)))]


I0E = OpSpec("SpecialI0EBackward0", ("self",), {"self": ("self", "result")}, _i0e_backward,
             jvp="auto_element_wise")
I1 = OpSpec("SpecialI1Backward0", ("self",), {"self": ("self", "result")}, _i1_backward,
            jvp="auto_element_wise")
I1E = OpSpec("SpecialI1EBackward0", ("self",), {"self": ("self", "result")}, _i1e_backward,
             jvp="auto_element_wise")


def i0e(self: Tensor) -> Tensor:
    return in_kernel_dtype(I0E, lambda x: kernels.bessel_i0(x, True), self)


def i1(self: Tensor) -> Tensor:
    return _unary(I1, lambda x: _bessel(x, 1, False), self)


def i1e(self: Tensor) -> Tensor:
    return _unary(I1E, lambda x: _bessel(x, 1, True), self)
