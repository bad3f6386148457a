"""torch's binary (and ternary) elementwise math (issue 24): xlogy, copysign, fmod,
remainder, fmax/fmin, hypot, logaddexp(2), ldexp, float_power, true_divide, lerp, addcmul,
addcdiv. Forward in numpy after ATen's CPU kernels (cited per op), each OpSpec one
derivatives.yaml entry, its formula written in engine ops.

A Python number operand is a wrapped scalar (common.wrap): it takes part in type promotion as
torch's do, and where derivatives.yaml has a Scalar overload (fmod.Scalar, xlogy.Scalar_Other,
lerp.Scalar, ...) the op records that overload's node.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec
from ..tensor import Tensor
from . import fma
from .basic import indexing
from .basic.comparisons import compare, isnan, logical_not
from .basic.elementwise import add, add_scalar, div, exp, mul, mul_scalar, neg, one_minus, sub
from .basic.powers import pow
from .basic.to_copy import to
from .common import (
    OUT,
    Number,
    check_tensor_or_number,
    elementwise_op,
    info_zeros,
    parse,
    result_dtype,
    wrap,
)
from .division import div_mode

LN2 = 0.6931471805599453


def _float_result(ts: list[Tensor]) -> dtypes.dtype:
    """The promoted dtype, integers giving the default float dtype."""
    dt = result_dtype(ts)
    return dt if dt.is_floating_point else dtypes.get_default_dtype()


def _binary_float(spec: OpSpec, fn: Callable[..., Any], self: Any, other: Any, **attrs: Any
                  ) -> Tensor:
    ts = [wrap(self), wrap(other)]
    return elementwise_op(spec, fn, ts, compute_dtype=_float_result(ts), **attrs)


def _masked_fill(t: Tensor, mask: Tensor, value: Number) -> Tensor:
    return indexing.masked_fill(t, mask, value)


# ---- xlogy ----------------------------------------------------------------------------

def _xlogy_array(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """BinaryOpsKernel xlogy: NaN if y is NaN, else 0 where x == 0, else x * log(y)."""
    x, y = np.broadcast_arrays(x, y)
    return np.where(np.isnan(y), y, np.where(x == 0, np.zeros((), x.dtype), x * np.log(y)))


def _xlogy_self(c: Any, g: Tensor) -> Tensor:
    """at::xlogy(grad, other).masked_fill((self == 0.) & (other <= 0.), 0.)"""
    mask = compare(compare(c.self, 0.0, np.equal), compare(c.other, 0.0, np.less_equal),
                   np.logical_and)
    return _masked_fill(xlogy(g, c.other), mask, 0.0)


XLOGY = OpSpec(
    "XlogyBackward0", ("self", "other"), {"self": ("self", "other"), "other": ("self", "other")},
    lambda c, g: c.grads(lambda: _xlogy_self(c, g), lambda: div(mul(g, c.self), c.other)),
    jvp=lambda c: add(_masked_fill(xlogy(c.self_t, c.other), compare(
        compare(c.self, 0.0, np.equal), compare(c.other, 0.0, np.less_equal),
        np.logical_and), 0.0), div(mul(c.other_t, c.self), c.other)))
# xlogy.Scalar_Self(Scalar self, Tensor other): other: grad * self / other
XLOGY_SCALAR_SELF = OpSpec(
    "XlogyBackward1", ("other",), {"other": ("other",)},
    lambda c, g: [div(mul_scalar(g, c.self), c.other)], jvp="auto_element_wise")


def _xlogy_scalar_other(c: Any, g: Tensor) -> Tensor:
    out = xlogy(g, c.other)
    return out if c.other > 0 else _masked_fill(out, compare(c.self, 0.0, np.equal), 0.0)


XLOGY_SCALAR_OTHER = OpSpec("XlogyBackward2", ("self",), {"self": ("self",)},
                            lambda c, g: [_xlogy_scalar_other(c, g)], jvp="auto_element_wise")


def xlogy(self: Tensor | Number, other: Tensor | Number) -> Tensor:
    parse("xlogy", (self, other), f"Tensor input, Tensor other{OUT}",
          f"Number self, Tensor other{OUT}", f"Tensor input, Number other{OUT}")
    if isinstance(self, Tensor) and isinstance(other, Tensor):
        return _binary_float(XLOGY, _xlogy_array, self, other)
    if isinstance(other, Tensor):
        ts = [wrap(self), other]
        return elementwise_op(XLOGY_SCALAR_SELF, lambda y: _xlogy_array(
            np.asarray(self, y.dtype), y), [other], compute_dtype=_float_result(ts), self=self)
    assert isinstance(self, Tensor)
    ts = [self, wrap(other)]
    return elementwise_op(XLOGY_SCALAR_OTHER, lambda x: _xlogy_array(
        x, np.asarray(other, x.dtype)), [self], compute_dtype=_float_result(ts), other=other)


# ---- copysign ---------------------------------------------------------------------------

def _copysign_self_backward(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """copysign_tensor_self_backward: grad * (result / self), 0 where self == 0."""
    ratio = _masked_fill(div(result, self), compare(self, 0.0, np.equal), 0.0)
    return mul(grad, ratio)


COPYSIGN = OpSpec(
    "CopysignBackward0", ("self", "other"), {"self": ("self", "result")},
    lambda c, g: c.grads(lambda: _copysign_self_backward(g, c.self, c.result),
                         lambda: info_zeros(g, c.other_shape)),   # zeros_like(other)
    jvp=lambda c: _copysign_self_backward(c.self_t, c.self, c.result),
    # (the formula reads self_t alone: a dual `other` of a plain self gives no tangent, as
    # torch's generated code checks only the tangents its formula reads)
    jvp_reads=("self",))
COPYSIGN_SCALAR = OpSpec(
    "CopysignBackward1", ("self",), {"self": ("self", "result")},
    lambda c, g: [_copysign_self_backward(g, c.self, c.result)], jvp="auto_element_wise")


def copysign(self: Tensor, other: Tensor | Number) -> Tensor:
    check_tensor_or_number("copysign", self, other)
    if isinstance(other, Tensor):
        return _binary_float(COPYSIGN, np.copysign, self, other, other_shape=tuple(other.shape))
    ts = [self, wrap(other)]
    return elementwise_op(COPYSIGN_SCALAR, lambda x: np.copysign(x, np.asarray(other, x.dtype)),
                          [self], compute_dtype=_float_result(ts), other=other)


# ---- fmod, remainder --------------------------------------------------------------------

def _mod_spec(name: str, mode: str) -> OpSpec:
    """fmod.Tensor / remainder.Tensor: self: grad; other: -grad * self.div(other, mode)."""
    return OpSpec(
        name, ("self", "other"), {"other": ("self", "other")},
        lambda c, g: c.grads(lambda: g,
                             lambda: mul(neg(g), div_mode(c.self, c.other, mode))),
        jvp=lambda c: sub(c.self_t, mul(c.other_t, div_mode(c.self, c.other, mode))))


FMOD = _mod_spec("FmodBackward1", "trunc")
REMAINDER = _mod_spec("RemainderBackward1", "floor")
FMOD_SCALAR = OpSpec("FmodBackward0", ("self",), backward=lambda c, g: [g],
                     jvp="auto_element_wise")
REMAINDER_SCALAR = OpSpec("RemainderBackward0", ("self",), backward=lambda c, g: [g],
                          jvp="auto_element_wise")


def _remainder_array(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ATen's remainder for floats: a - b * floor(a / b) as fmod plus b where the signs
    differ (BinaryOpsKernel: mod = fmod(a, b); if mod != 0 and (b < 0) != (mod < 0):
    mod += b); integers: Python's modulo, which numpy's is."""
    if not np.issubdtype(np.result_type(a, b), np.floating):
        return np.remainder(a, b)
    mod = np.fmod(a, b)
    return np.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def _mod(tensor_spec: OpSpec, scalar_spec: OpSpec, fn: Callable[..., Any], self: Tensor,
         other: Tensor | Number) -> Tensor:
    if isinstance(other, Tensor):
        return elementwise_op(tensor_spec, fn, [self, other])
    dt = result_dtype([self, wrap(other)])
    return elementwise_op(scalar_spec, lambda x: fn(x, np.asarray(other, x.dtype)), [self],
                          compute_dtype=dt)


def fmod(self: Tensor, other: Tensor | Number) -> Tensor:
    check_tensor_or_number("fmod", self, other)
    return _mod(FMOD, FMOD_SCALAR, np.fmod, self, other)


def remainder(self: Tensor | Number, other: Tensor | Number) -> Tensor:
    parse("remainder", (self, other), f"Tensor input, Tensor other{OUT}",
          "Number self, Tensor other", f"Tensor input, Number other{OUT}")
    if not isinstance(self, Tensor):   # remainder.Scalar_Tensor: a wrapped-number self
        assert isinstance(other, Tensor)
        return _mod(REMAINDER, REMAINDER_SCALAR, _remainder_array, wrap(self), other)
    return _mod(REMAINDER, REMAINDER_SCALAR, _remainder_array, self, other)


# ---- fmax, fmin -------------------------------------------------------------------------

def _fmax_wins(c: Any, keep: Callable[..., Any]) -> Tensor:
    """(self >= other).logical_or_(other.isnan()) (<= for fmin)"""
    return compare(compare(c.self, c.other, keep), isnan(c.other), np.logical_or)


def _fmax_spec(name: str, keep: Callable[..., Any], jvp_keep: Callable[..., Any]) -> OpSpec:
    return OpSpec(
        name, ("self", "other"), {"self": ("self", "other"), "other": ("self", "other")},
        lambda c, g: c.grads(
            lambda: _masked_fill(g, logical_not(_fmax_wins(c, keep)), 0),
            lambda: _masked_fill(g, _fmax_wins(c, keep), 0)),
        # other_t + (self_p > other_p).logical_or_(other_p.isnan()) * (self_t - other_t)
        jvp=lambda c: add(c.other_t, mul(_fmax_wins(c, jvp_keep), sub(c.self_t, c.other_t))))


FMAX = _fmax_spec("FmaxBackward0", np.greater_equal, np.greater)
FMIN = _fmax_spec("FminBackward0", np.less_equal, np.less_equal)


def fmax(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_op(FMAX, np.fmax, [self, other])


def fmin(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_op(FMIN, np.fmin, [self, other])


# ---- hypot, logaddexp, logaddexp2, ldexp --------------------------------------------------

HYPOT = OpSpec(
    "HypotBackward0", ("self", "other"),
    {"self": ("self", "result"), "other": ("other", "result")},
    lambda c, g: c.grads(lambda: div(mul(g, c.self), c.result),
                         lambda: div(mul(g, c.other), c.result)),
    jvp=lambda c: add(div(mul(c.self_t, c.self), c.result),
                      div(mul(c.other_t, c.other), c.result)))


def hypot(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_op(HYPOT, np.hypot, [self, other])


def _logaddexp_array(base2: bool) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """BinaryOpsKernel logaddexp(2): a where both are the same infinity, else
    max + log1p(exp(-|a - b|)) (exp2, and a factor 1 / ln 2, for base 2)."""
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_arrays(a, b)
        m = np.maximum(a, b)
        d = -np.abs(a - b)
        tail = np.log1p(np.exp2(d)) * a.dtype.type(1 / LN2) if base2 else np.log1p(np.exp(d))
        return np.where(np.isinf(a) & (a == b), a, m + tail)
    return fn


def _one_plus(x: Tensor) -> Tensor:
    return add_scalar(x, 1)


LOGADDEXP = OpSpec(
    "LogaddexpBackward0", ("self", "other"),
    {"self": ("self", "other"), "other": ("self", "other")},
    lambda c, g: c.grads(lambda: div(g, _one_plus(exp(sub(c.other, c.self)))),
                         lambda: div(g, _one_plus(exp(sub(c.self, c.other))))),
    jvp=lambda c: add(div(c.self_t, _one_plus(exp(sub(c.other, c.self)))),
                      div(c.other_t, _one_plus(exp(sub(c.self, c.other))))))
LOGADDEXP2 = OpSpec(
    "Logaddexp2Backward0", ("self", "other"),
    {"self": ("self", "other"), "other": ("self", "other")},
    lambda c, g: c.grads(lambda: div(g, _one_plus(pow(2, sub(c.other, c.self)))),
                         lambda: div(g, _one_plus(pow(2, sub(c.self, c.other))))),
    jvp=lambda c: add(div(c.self_t, _one_plus(pow(2, sub(c.other, c.self)))),
                      div(c.other_t, _one_plus(pow(2, sub(c.self, c.other))))))


def logaddexp(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_op(LOGADDEXP, _logaddexp_array(False), [self, other])


def logaddexp2(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_op(LOGADDEXP2, _logaddexp_array(True), [self, other])


# self: grad * at::pow(2, other); other: grad * result * M_LN2
LDEXP = OpSpec(
    "LdexpBackward0", ("self", "other"), {"self": ("other",), "other": ("result",)},
    lambda c, g: c.grads(lambda: mul(g, pow(2, c.other)),
                         lambda: mul_scalar(mul(g, c.result), LN2)),
    jvp=lambda c: add(mul(c.self_t, pow(2, c.other)), mul_scalar(mul(c.other_t, c.result), LN2)))


def ldexp(self: Tensor, other: Tensor) -> Tensor:
    """self * 2 ** other in the promoted float dtype (ATen: at::mul(self, at::pow(2.0, other)))."""
    ts = [wrap(self), wrap(other)]
    dt = _float_result(ts)
    return elementwise_op(LDEXP, lambda a, b: a * np.power(dt.np.type(2), b), ts, compute_dtype=dt)


# ---- float_power, true_divide -----------------------------------------------------------

def float_power(self: Tensor | Number, exponent: Tensor | Number) -> Tensor:
    """CompositeImplicit: pow in float64, each tensor operand converted (ToCopyBackward0
    where it was not float64), a number operand as a float."""
    parse("float_power", (self, exponent), f"Tensor input, Tensor exponent{OUT}",
          f"Number self, Tensor exponent{OUT}", f"Tensor input, Number exponent{OUT}")

    def as_double(x: Tensor | Number) -> Tensor | Number:
        return to(x, dtypes.float64) if isinstance(x, Tensor) else builtins.float(x)
    # ATen's `pow(base.to(dtype), exp.to(dtype))`: GCC evaluates the arguments right to
    # left, so exp's ToCopyBackward0 is made first and runs after base's in the backward
    # (a create_graph gradient of x.float_power(x) adds base's term first; found by the
    # generator)
    double_exponent = as_double(exponent)
    return pow(as_double(self), double_exponent)


def true_divide(self: Tensor, other: Tensor | Number) -> Tensor:
    """An alias of div (DivBackward0)."""
    return div(self, other)


# ---- lerp, addcmul, addcdiv -------------------------------------------------------------

LERP_SCALAR = OpSpec(
    "LerpBackward0", ("self", "end"),
    backward=lambda c, g: c.grads(lambda: mul_scalar(g, 1 - builtins.float(c.weight)),
                                  lambda: mul_scalar(g, c.weight)),
    jvp=lambda c: lerp(c.self_t, c.end_t, c.weight))
LERP = OpSpec(
    "LerpBackward1", ("self", "end", "weight"),
    {"self": ("weight",), "end": ("weight",), "weight": ("self", "end")},
    lambda c, g: c.grads(lambda: mul(g, one_minus(c.weight)),
                         lambda: mul(g, c.weight),
                         lambda: mul(g, sub(c.end, c.self))),
    jvp=lambda c: add(lerp(c.self_t, c.end_t, c.weight), mul(c.weight_t, sub(c.end, c.self))))


def lerp(self: Tensor, end: Tensor, weight: Tensor | Number) -> Tensor:
    # Lerp.cpp: no type promotion; a 0-dim weight tensor may be of another dtype
    if end.dtype != self.dtype:
        raise RuntimeError(messages.lerp_dtype("end", self.dtype.cpp_name, end.dtype.cpp_name))
    if isinstance(weight, Tensor) and weight.ndim > 0 and weight.dtype != self.dtype:
        raise RuntimeError(messages.lerp_dtype("weight", self.dtype.cpp_name,
                                               weight.dtype.cpp_name))
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(messages.kernel_not_implemented(kernel,
                                                                  self.dtype.scalar_name))
    if isinstance(weight, Tensor):
        return elementwise_op(LERP, fma.lerp, [self, end, weight])
    return elementwise_op(LERP_SCALAR, lambda a, b: fma.lerp(a, b, np.asarray(weight, a.dtype)),
                          [self, end], weight=weight)


def _times_value(t: Tensor, value: Number) -> Tensor:
    return mul_scalar(t, value)


ADDCMUL = OpSpec(
    "AddcmulBackward0", ("self", "tensor1", "tensor2"),
    {"tensor1": ("tensor2",), "tensor2": ("tensor1",)},
    lambda c, g: c.grads(lambda: g,
                         lambda: mul(g, _times_value(c.tensor2, c.value)),
                         lambda: mul(g, _times_value(c.tensor1, c.value))),
    jvp=lambda c: add(add(c.self_t, _times_value(mul(c.tensor1_t, c.tensor2), c.value)),
                      _times_value(mul(c.tensor2_t, c.tensor1), c.value)))


def _addcdiv_t2(c: Any, g: Tensor) -> Tensor:
    """-grad * (value * tensor1 / (tensor2 * tensor2))"""
    return mul(neg(g), div(_times_value(c.tensor1, c.value), mul(c.tensor2, c.tensor2)))


def _addcdiv_jvp(c: Any) -> Tensor:
    first = add(c.self_t, _times_value(div(c.tensor1_t, c.tensor2), c.value))
    return sub(first, _times_value(div(mul(c.tensor2_t, div(c.tensor1, c.tensor2)), c.tensor2),
                                   c.value))


ADDCDIV = OpSpec(
    "AddcdivBackward0", ("self", "tensor1", "tensor2"),
    {"tensor1": ("tensor2",), "tensor2": ("tensor1", "tensor2")},
    lambda c, g: c.grads(lambda: g,
                         lambda: mul(g, div(wrap(c.value), c.tensor2)),
                         lambda: _addcdiv_t2(c, g)),
    jvp=_addcdiv_jvp)


def addcmul(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    def fn(a: np.ndarray, b: np.ndarray, d: np.ndarray) -> np.ndarray:
        return a + np.asarray(value, a.dtype) * b * d
    return elementwise_op(ADDCMUL, fn, [self, tensor1, tensor2], value=value)


def addcdiv(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    if not (tensor1.dtype.is_floating_point or tensor2.dtype.is_floating_point):
        raise RuntimeError(messages.ADDCDIV_INTEGER)

    def fn(a: np.ndarray, b: np.ndarray, d: np.ndarray) -> np.ndarray:
        return a + np.asarray(value, a.dtype) * b / d
    return elementwise_op(ADDCDIV, fn, [self, tensor1, tensor2], value=value)
