"""torch's unary elementwise math (issue 24): inverse and hyperbolic trigonometry, logs and
exps of other bases (erf and the gamma family: erf_gamma.py), rounding, sign, nan_to_num,
clamp_min / clamp_max, conversions. Forward in numpy (special functions: special_kernels.py), each
OpSpec one derivatives.yaml entry, its formula written in engine ops (so create_graph
differentiates it again), forward mode `auto_element_wise` where derivatives.yaml says so.

Float32 results are computed in float64 and rounded once, as elementwise.py's transcendental
functions are (torch's float32 kernels are nearly always correctly rounded).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import complex_polar, inplace_ops
from .basic import complex_numbers
from .basic.comparisons import compare, where
from .basic.elementwise import (
    add_scalar,
    conj_of,
    cos,
    div,
    mul,
    mul_scalar,
    neg,
    one_minus,
    sin,
    sub,
    sub_scalar,
)
from .basic.powers import pow
from .common import (
    elementwise_op,
    float_dtype,
    info_zeros,
    iterator_result,
    new,
    result_dtype,
    zeros_like,
    zeros_scalar,
)

Formula = Callable[[Any, Tensor], Tensor]


def unary_spec(name: str, saves: tuple[str, ...], formula: Formula, jvp: Any = "auto_element_wise"
               ) -> OpSpec:
    """A one-input derivatives.yaml entry: `self: <formula>`, `result: auto_element_wise`.
    The formulas conjugate the derivative as derivatives.yaml does (grad * f'(z).conj(),
    the conjugate Wirtinger convention); conj_of is the identity on real tensors."""
    return OpSpec(name, ("self",), {"self": saves} if saves else {},
                  lambda c, g: [formula(c, g)], jvp=jvp)


def float_result(spec: OpSpec, fn: Callable[[np.ndarray], Any], self: Tensor, **attrs: Any
                 ) -> Tensor:
    """A float result (integers give the default dtype), computed in float64 and rounded."""
    dt = float_dtype(self)
    wide = dtypes.complex128 if dt.is_complex else dtypes.float64
    return elementwise_op(spec, fn, (self,), out_dtype=dt, compute_dtype=wide, **attrs)


def _one_minus_square(x: Tensor) -> Tensor:
    """-self * self + 1"""
    return add_scalar(mul(neg(x), x), 1)


# ---- trigonometric and hyperbolic ---------------------------------------------------------

ACOS = unary_spec("AcosBackward0", ("self",),
                  lambda c, g: mul(g, neg(conj_of(rsqrt(_one_minus_square(c.self))))))
ASIN = unary_spec("AsinBackward0", ("self",),
                  lambda c, g: mul(g, conj_of(rsqrt(_one_minus_square(c.self)))))
ATAN = unary_spec("AtanBackward0", ("self",),
                  lambda c, g: div(g, conj_of(add_scalar(mul(c.self, c.self), 1))))
# self.is_complex() ? grad * ((self + 1).rsqrt() * (self - 1).rsqrt()).conj()
#                   : grad * (self * self - 1).rsqrt()   (sqrt(x*y) = sqrt(x)*sqrt(y) only for
# real x, y >= 0)
ACOSH = unary_spec("AcoshBackward0", ("self",), lambda c, g: mul(g, conj_of(mul(
    rsqrt(add_scalar(c.self, 1)), rsqrt(sub_scalar(c.self, 1))))) if c.self.dtype.is_complex
    else mul(g, rsqrt(sub_scalar(mul(c.self, c.self), 1))))
ASINH = unary_spec("AsinhBackward0", ("self",),
                   lambda c, g: mul(g, conj_of(rsqrt(add_scalar(pow(c.self, 2), 1)))))
# grad * 1 / (1 - self.pow(2))
ATANH = unary_spec("AtanhBackward0", ("self",),
                   lambda c, g: div(mul_scalar(g, 1), conj_of(one_minus(pow(c.self, 2)))))
SINH = unary_spec("SinhBackward0", ("self",), lambda c, g: mul(g, conj_of(cosh(c.self))))
COSH = unary_spec("CoshBackward0", ("self",), lambda c, g: mul(g, conj_of(sinh(c.self))))
TAN = unary_spec("TanBackward0", ("result",),
                 lambda c, g: mul(g, conj_of(add_scalar(pow(c.result, 2), 1))))


def acos(self: Tensor) -> Tensor:
    return float_result(ACOS, np.arccos, self)


def asin(self: Tensor) -> Tensor:
    return float_result(ASIN, np.arcsin, self)


def atan(self: Tensor) -> Tensor:
    return float_result(ATAN, np.arctan, self)


def acosh(self: Tensor) -> Tensor:
    return float_result(ACOSH, np.arccosh, self)


def asinh(self: Tensor) -> Tensor:
    return float_result(ASINH, np.arcsinh, self)


def atanh(self: Tensor) -> Tensor:
    return float_result(ATANH, np.arctanh, self)


def sinh(self: Tensor) -> Tensor:
    return float_result(SINH, np.sinh, self)


def cosh(self: Tensor) -> Tensor:
    return float_result(COSH, np.cosh, self)


def tan(self: Tensor) -> Tensor:
    return float_result(TAN, np.tan, self)


# ---- logs, exps, powers -------------------------------------------------------------------

LN2, LN10 = 0.6931471805599453, 2.3025850929940456
# log1p_backward(grad, self): grad / (self + 1)
LOG1P = unary_spec("Log1PBackward0", ("self",), lambda c, g: div(g, conj_of(add_scalar(c.self, 1))))
LOG2 = unary_spec("Log2Backward0", ("self",), lambda c, g: div(g, mul_scalar(conj_of(c.self), LN2)))
LOG10 = unary_spec("Log10Backward0", ("self",),
                   lambda c, g: div(g, mul_scalar(conj_of(c.self), LN10)))
EXPM1 = unary_spec("Expm1Backward0", ("result",),
                   lambda c, g: mul(g, add_scalar(conj_of(c.result), 1)))
EXP2 = unary_spec("Exp2Backward0", ("result",),
                  lambda c, g: mul_scalar(mul(g, conj_of(c.result)), LN2))
# -0.5 * grad * result.pow(3).conj()
RSQRT: OpSpec = unary_spec("RsqrtBackward0", ("result",),
                           lambda c, g: mul(mul_scalar(g, -0.5), conj_of(pow(c.result, 3))))


def _sinc_backward(c: Any, g: Tensor) -> Tensor:
    """FunctionsManual sinc_backward: grad * ((self_pi * cos - sin) / self_squared_pi), the
    division before the product (MulBackward0 over DivBackward0 under create_graph); 0
    where self * self * pi is 0."""
    self_pi = mul_scalar(c.self, math.pi)
    self_squared_pi = mul_scalar(mul(c.self, c.self), math.pi)
    out = mul(g, div(sub(mul(self_pi, cos(self_pi)), sin(self_pi)), self_squared_pi))
    return where(compare(self_squared_pi, 0.0, np.equal), zeros_scalar(g), out)


SINC = unary_spec("SincBackward0", ("self",), _sinc_backward)
DEG2RAD = unary_spec("Deg2RadBackward0", (), lambda c, g: mul_scalar(g, math.pi / 180))
RAD2DEG = unary_spec("Rad2DegBackward0", (), lambda c, g: mul_scalar(g, 180 / math.pi))


def log1p(self: Tensor) -> Tensor:
    return float_result(LOG1P, np.log1p, self)


def log2(self: Tensor) -> Tensor:
    return float_result(LOG2, np.log2, self)


def log10(self: Tensor) -> Tensor:
    return float_result(LOG10, np.log10, self)


def expm1(self: Tensor) -> Tensor:
    return float_result(EXPM1, np.expm1, self)


def exp2(self: Tensor) -> Tensor:
    return float_result(EXP2, np.exp2, self)


def rsqrt(self: Tensor) -> Tensor:
    return float_result(RSQRT, lambda a: 1.0 / np.sqrt(a), self)


def square(self: Tensor) -> Tensor:
    """CompositeImplicit: at::pow(self, 2) (PowBackward0)."""
    return pow(self, 2)


def _sinc(a: np.ndarray) -> np.ndarray:
    """ATen's sinc: product = pi * a, sin(product) / product in a's own dtype (1 at 0). At a
    nonzero integer the result is a rounding residue, float32's (2.8e-08 at -2) not float64's
    rounded (-3.9e-17): it decides ties (max's gradient among them)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        product = a.dtype.type(math.pi) * a
        return np.where(a == 0, a.dtype.type(1), np.sin(product) / product)


def sinc(self: Tensor) -> Tensor:
    dt = float_dtype(self)
    return elementwise_op(SINC, _sinc, (self,), out_dtype=dt, compute_dtype=dt)


def _scaled(spec: OpSpec, factor: float, self: Tensor) -> Tensor:
    """self * factor in self's float dtype: the factor is a wrapped scalar, rounded to it."""
    dt = float_dtype(self)
    return elementwise_op(spec, lambda a: a * dt.np.type(factor), (self,), compute_dtype=dt)


def deg2rad(self: Tensor) -> Tensor:
    return _scaled(DEG2RAD, math.pi / 180, self)


def rad2deg(self: Tensor) -> Tensor:
    return _scaled(RAD2DEG, 180 / math.pi, self)


# ---- logit --------------------------------------------------------------------------------

def _logit_backward(c: Any, g: Tensor) -> Tensor:
    """infinitely_differentiable_logit_backward (the first-order kernel logit_backward gives
    the same values): grad / (self * (1 - self)) inside [eps, 1 - eps] (without eps [0, 1]),
    outside 0 (without eps NaN)."""
    lo, hi = (0.0, 1.0) if c.eps is None else (c.eps, 1.0 - c.eps)
    inside = compare(compare(c.self, lo, np.greater_equal), compare(c.self, hi, np.less_equal),
                     np.logical_and)
    value = new(math.nan if c.eps is None else 0.0, c.self.dtype, c.self.device)
    return where(inside, div(g, mul(c.self, one_minus(c.self))), value)


LOGIT = unary_spec("LogitBackward0", ("self",), _logit_backward)


def logit(self: Tensor, eps: float | None = None) -> Tensor:
    def fn(a: np.ndarray) -> np.ndarray:
        # torch's kernel tests `x < eps` before `x > 1 - eps` (np.clip tests them the other
        # way): with eps above 0.5 an element under eps becomes eps, not 1 - eps
        x = a if eps is None else np.where(a < eps, eps, np.where(a > 1.0 - eps, 1.0 - eps, a))
        return np.log(x / (1.0 - x))
    return float_result(LOGIT, fn, self, eps=eps)


# ---- complex-number views of a real tensor, angle, frexp, nextafter --------------------------
# Complex dtypes are not modelled: for a real tensor torch.real, conj, resolve_conj,
# resolve_neg and conj_physical return self itself (no node, no view).

# real tensors' forms here; complex tensors' in complex_numbers.py
def real(self: Tensor) -> Tensor:
    return complex_numbers.real(self)


def conj(self: Tensor) -> Tensor:
    return complex_numbers.conj(self)


def resolve_conj(self: Tensor) -> Tensor:
    return complex_numbers.resolve_conj(self)


def resolve_neg(self: Tensor) -> Tensor:
    return self


def conj_physical(self: Tensor) -> Tensor:
    return complex_numbers.conj_physical(self)


# angle_backward of a real self: zeros_like(self, MemoryFormat::Preserve); the jvp likewise
ANGLE = unary_spec("AngleBackward0", ("self",), lambda c, g: zeros_like(c.self))


def angle(self: Tensor) -> Tensor:
    """A real x's angle: pi where x < 0, NaN where x is NaN, else 0 (ATen's angle_impl)."""
    if self.dtype.is_complex:
        return complex_polar.angle(self)
    def fn(a: np.ndarray) -> np.ndarray:
        return np.where(np.isnan(a), a, np.where(a < 0, a.dtype.type(math.pi), a.dtype.type(0)))
    return elementwise_op(ANGLE, fn, (self,), compute_dtype=float_dtype(self))


class frexp_return_type(tuple[Tensor, Tensor]):
    """torch.return_types.frexp: (mantissa, exponent)."""

    @property
    def mantissa(self) -> Tensor:
        return self[0]

    @property
    def exponent(self) -> Tensor:
        return self[1]


frexp_return_type.__name__ = frexp_return_type.__qualname__ = "frexp"

# self: grad / exponent.exp2(); mantissa: self_t / exponent.exp2()
FREXP = OpSpec("FrexpBackward0", ("self",), {"self": ("exponent",)},
               lambda c, g: [div(g, exp2(c.exponent))],
               jvp=lambda c: div(c.self_t, exp2(c.exponent)))


def frexp(self: Tensor) -> frexp_return_type:
    """C's frexp (numpy's): self = mantissa * 2 ** exponent, |mantissa| in [0.5, 1); the
    exponent an int32 tensor, saved for the backward."""
    if not self.dtype.is_floating_point:
        raise RuntimeError(messages.FREXP_DTYPE)
    m, e = np.frexp(self._data)
    # both outputs of one TensorIterator: in the layout it gives (a transposed input, a
    # transposed mantissa and exponent; so the tangent self_t / exponent.exp2() is too)
    exponent = iterator_result(e.astype(np.int32), dtypes.int32, self.device, [self])
    mantissa = record(FREXP, iterator_result(m, self.dtype, self.device, [self]), [self],
                      exponent=exponent)
    return frexp_return_type((mantissa, exponent))


# other's gradient is derivatives.yaml's zeros_like(other): of other's shape, contiguous and at
# _version 1 in torch 2.13 (measured, whatever the shapes): common.info_zeros
NEXTAFTER = OpSpec(
    "NextafterBackward0", ("self", "other"), {"self": ("self", "other"), "other": ("other",)},
    lambda c, g: c.grads(lambda: where(compare(c.self, c.other, np.not_equal), g, zeros_scalar(g)),
                         lambda: info_zeros(c.other)),
    jvp=lambda c: where(compare(c.self, c.other, np.not_equal), c.self_t, zeros_scalar(c.self_t)),
    jvp_reads=("self",))   # (other's tangent is not read: a dual other alone gives none)


def nextafter(self: Tensor, other: Tensor) -> Tensor:
    # nextafter_cpu dispatches floating types only, on the operands' promoted dtype
    promoted = result_dtype([self, other])
    if not promoted.is_floating_point:
        raise NotImplementedError(messages.kernel_not_implemented("nextafter_cpu",
                                                                  promoted.scalar_name))
    return elementwise_op(NEXTAFTER, np.nextafter, (self, other))


# ---- in-place forms ------------------------------------------------------------------------
# Tensor.<op>_: the same node and saved values, written by inplace.py's machinery (which saves
# a clone of self where the formula reads it). acosh_, asinh_ and atanh_ are left out: torch's
# autograd refuses them (derivatives.yaml: not_implemented("inplace version of acosh")).

def inplace_variant(spec: OpSpec, fn: Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    def op_(self: Tensor) -> Tensor:
        return inplace_ops.unary_inplace(spec, fn)(self)
    op_.__name__ = op_.__qualname__ = fn.__name__ + "_"
    return op_


acos_ = inplace_variant(ACOS, acos)
asin_ = inplace_variant(ASIN, asin)
atan_ = inplace_variant(ATAN, atan)
sinh_ = inplace_variant(SINH, sinh)
cosh_ = inplace_variant(COSH, cosh)
tan_ = inplace_variant(TAN, tan)
log1p_ = inplace_variant(LOG1P, log1p)
log2_ = inplace_variant(LOG2, log2)
log10_ = inplace_variant(LOG10, log10)
expm1_ = inplace_variant(EXPM1, expm1)
exp2_ = inplace_variant(EXP2, exp2)
rsqrt_ = inplace_variant(RSQRT, rsqrt)
sinc_ = inplace_variant(SINC, sinc)
deg2rad_ = inplace_variant(DEG2RAD, deg2rad)
rad2deg_ = inplace_variant(RAD2DEG, rad2deg)
