"""The error and gamma functions (issue 24): erf, erfc, erfinv, lgamma, digamma, polygamma,
mvlgamma, i0 and special.i1, with the in-place forms of those that have one. Forward in numpy
(special_kernels.py), each formula written in engine ops."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec
from ..tensor import Tensor
from . import special_kernels as sk
from . import unary_via_backward as ub  # abs, tanh, sigmoid, relu
from .basic import elementwise, reductions, views
from .basic.comparisons import compare, where
from .basic.elementwise import add, exp, mul, mul_scalar, neg, sub, sub_scalar
from .basic.powers import pow
from .common import (
    elementwise_op,
    float_dtype,
    new,
    result_dtype,
    wrap,
)
from .unary_math import float_result, inplace_variant, unary_spec

# ---- error and gamma functions ------------------------------------------------------------

_TWO_BY_SQRT_PI = 2.0 / math.sqrt(math.pi)
# 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad
ERF = unary_spec("ErfBackward0", ("self",),
                 lambda c, g: mul(mul_scalar(exp(neg(pow(c.self, 2))), _TWO_BY_SQRT_PI), g))
ERFC = unary_spec("ErfcBackward0", ("self",),
                  lambda c, g: mul(mul_scalar(exp(neg(pow(c.self, 2))), -_TWO_BY_SQRT_PI), g))
# 0.5 * sqrt(M_PI) * exp(self.erfinv().pow(2)) * grad
ERFINV = unary_spec("ErfinvBackward0", ("self",),
                    lambda c, g: mul(mul_scalar(exp(pow(erfinv(c.self), 2)),
                                                0.5 * math.sqrt(math.pi)), g))
LGAMMA = unary_spec("LgammaBackward0", ("self",), lambda c, g: mul(g, digamma(c.self)))
DIGAMMA = unary_spec("DigammaBackward0", ("self",), lambda c, g: mul(g, polygamma(1, c.self)))
POLYGAMMA = unary_spec("PolygammaBackward0", ("self",),
                       lambda c, g: mul(g, polygamma(c.n + 1, c.self)))


# igamma: derivatives.yaml's `self: not_implemented("igamma: input")`, `other: grad *
# exp((self - 1) * log(other) - other - lgamma(self))`, and no forward formula
def _igamma_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    def input_grad() -> Tensor:
        raise NotImplementedError(messages.derivative_not_implemented("igamma: input"))
    return c.grads(input_grad, lambda: mul(g, exp(sub(
        sub(mul(sub_scalar(c.self, 1), elementwise.log(c.other)), c.other), lgamma(c.self)))))


IGAMMA = OpSpec("IgammaBackward0", ("self", "other"), {"other": ("other", "self")},
                _igamma_backward)


def igamma(self: Tensor, other: Tensor) -> Tensor:
    ts = [wrap(self), wrap(other)]
    dt = result_dtype(ts)
    if not dt.is_floating_point:   # AT_DISPATCH_FLOATING_TYPES: no integer or complex kernel
        raise NotImplementedError(messages.kernel_not_implemented("igamma_cpu", dt.scalar_name))
    return elementwise_op(IGAMMA, sk.igamma, ts, out_dtype=dt, compute_dtype=dtypes.float64)


def erf(self: Tensor) -> Tensor:
    return float_result(ERF, sk.erf, self)


def erfc(self: Tensor) -> Tensor:
    return float_result(ERFC, sk.erfc, self)


def erfinv(self: Tensor) -> Tensor:
    return float_result(ERFINV, sk.erfinv, self)


def lgamma(self: Tensor) -> Tensor:
    return float_result(LGAMMA, sk.lgamma, self)


def digamma(self: Tensor) -> Tensor:
    return float_result(DIGAMMA, sk.digamma, self)


def polygamma(n: int, self: Tensor) -> Tensor:
    if n < 0:
        raise RuntimeError(messages.POLYGAMMA_NEGATIVE)
    if n == 1:   # trigamma, in the input's precision as torch's kernel
        return elementwise_op(POLYGAMMA, sk.trigamma, (self,), compute_dtype=float_dtype(self),
                              n=n)
    return float_result(POLYGAMMA, lambda a: sk.polygamma(n, a), self, n=n)


def _mvlgamma_backward(c: Any, g: Tensor) -> Tensor:
    """FunctionsManual mvlgamma_backward: grad * sum_j digamma(self - j/2), j < p, built as
    torch builds it (arange(-p/2 + 1/2, 1/2, 1/2) + self.unsqueeze(-1), digamma_ in place,
    sum(-1)), so that a create_graph gradient's graph is torch's (the generator's ci profile
    met AddBackward0 of digammas where torch has SumBackward1(DigammaBackward0(...)))."""
    offsets = new(np.arange(-c.p / 2 + 0.5, 0.5, 0.5), c.self.dtype, c.self.device)
    args = add(offsets, views.unsqueeze(c.self, -1))
    return mul(g, reductions.sum(digamma_(args), -1))


MVLGAMMA = unary_spec("MvlgammaBackward0", ("self",), _mvlgamma_backward)


def mvlgamma(self: Tensor, p: int) -> Tensor:
    if p < 1:
        raise RuntimeError(messages.MVLGAMMA_P)

    def fn(a: np.ndarray) -> np.ndarray:
        out = np.full(a.shape, p * (p - 1) / 4 * math.log(math.pi))
        for j in range(p):
            out = out + sk.lgamma(a - j / 2)
        return out
    return float_result(MVLGAMMA, fn, self, p=p)


def _i0_backward(c: Any, g: Tensor) -> Tensor:
    return mul(g, special_i1(c.self))


I0 = unary_spec("I0Backward0", ("self",), _i0_backward)


def _i1_backward(c: Any, g: Tensor) -> Tensor:
    """FunctionsManual i1_backward: 0.5 where |self| <= eps (the limit), where the formula
    would divide by zero."""
    eps = float(np.finfo(c.self.dtype.np).eps)
    not_tiny = compare(ub.abs(c.self), eps, np.greater)
    safe = where(not_tiny, c.self, new(eps, c.self.dtype, c.self.device))
    gradx = sub(i0(safe), mul(c.result, elementwise.reciprocal(safe)))
    return mul(g, where(not_tiny, gradx, new(0.5, c.self.dtype, c.self.device)))


SPECIAL_I1 = unary_spec("SpecialI1Backward0", ("self", "result"), _i1_backward)


def in_kernel_dtype(spec: OpSpec, fn: Callable[[np.ndarray], np.ndarray], self: Tensor
                    ) -> Tensor:
    """A float result computed in its own dtype, as torch's kernel computes it (float16 and
    bfloat16 in float32: Math.h upcasts them), where rounding once from float64 (`float_result`)
    differs from torch by more than the comparison forgives downstream (i0, i0e)."""
    out = float_dtype(self)
    compute = out if out in (dtypes.float32, dtypes.float64) else dtypes.float32
    return elementwise_op(spec, fn, (self,), out_dtype=out, compute_dtype=compute)


def i0(self: Tensor) -> Tensor:
    return in_kernel_dtype(I0, lambda x: sk.bessel_i0(x, False), self)


def special_i1(self: Tensor) -> Tensor:
    """torch.special.i1 (i0's gradient)."""
    return float_result(SPECIAL_I1, sk.i1, self)


# in-place forms (unary_math.inplace_variant: inplace.py's machinery)
erf_ = inplace_variant(ERF, erf)
erfc_ = inplace_variant(ERFC, erfc)
erfinv_ = inplace_variant(ERFINV, erfinv)
lgamma_ = inplace_variant(LGAMMA, lgamma)
digamma_ = inplace_variant(DIGAMMA, digamma)
i0_ = inplace_variant(I0, i0)
