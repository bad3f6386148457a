"""Elementwise ops: arithmetic (torch.div, which takes a rounding mode: division.py), pow,
unary functions (clamp: piecewise.py; atan2: atan2.py). Forward in numpy (kernels.py where
numpy's own differs from torch's), backward written in engine ops.

Each OpSpec below is one derivatives.yaml entry: torch's node name, the inputs
that get edges, which saved values each input's formula reads, and the formula.
Because formulas call engine ops, create_graph=True differentiates them again.
Broadcast grads are *not* reduced here: like torch, the engine's validate_outputs
sums them back to each input's shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import dtypes, messages
from ...autograd_meta import OpSpec, record
from ...tensor import Tensor
from .. import kernels, zero_tensor
from ..common import (
    OUT,
    Number,
    _compute,
    _elementwise,
    _float_dtype,
    _promotes,
    iterator_result,
    new,
    parse,
    wrap,
    zeros_contiguous,
    zeros_scalar,
)
from ..out_overloads import into_out

# ---- arithmetic -------------------------------------------------------------------

ADD = OpSpec("AddBackward0", ("self", "other"),
             backward=lambda c, g: c.grads(lambda: g, lambda: _times(g, c.alpha)),
             jvp=lambda c: add(c.self_t, _times(c.other_t, c.alpha)))
SUB = OpSpec("SubBackward0", ("self", "other"),
             backward=lambda c, g: c.grads(lambda: g, lambda: _times(neg(g), c.alpha)),
             jvp=lambda c: sub(c.self_t, _times(c.other_t, c.alpha)))
ADD_SCALAR = OpSpec("AddBackward1", ("self",), backward=lambda c, g: [g],
                    jvp=lambda c: copying.clone(c.self_t))
SUB_SCALAR = OpSpec("SubBackward1", ("self",), backward=lambda c, g: [g], jvp="auto_element_wise")
RSUB = OpSpec("RsubBackward0", ("self", "other"),
              backward=lambda c, g: c.grads(lambda: _times(neg(g), c.alpha), lambda: g),
              jvp=lambda c: add(neg(_times(c.self_t, c.alpha)), c.other_t))
RSUB_SCALAR = OpSpec("RsubBackward1", ("self",),
                     backward=lambda c, g: [_times(neg(g), c.alpha)], jvp="auto_element_wise")
MUL = OpSpec("MulBackward0", ("self", "other"), {"self": ("other",), "other": ("self",)},
             lambda c, g: c.grads(lambda: mul(g, _conj(c.other)), lambda: mul(g, _conj(c.self))),
             jvp=lambda c: add(mul(c.other_t, c.self), mul(c.self_t, c.other)))
MUL_SCALAR = OpSpec("MulBackward1", ("self",),
                    backward=lambda c, g: [mul_scalar(g, _conj(c.other))],
                    jvp=lambda c: mul_scalar(c.self_t, c.other))
DIV = OpSpec("DivBackward0", ("self", "other"), {"self": ("other",), "other": ("self", "other")},
             lambda c, g: c.grads(lambda: div(g, _conj(c.other)),
                                  lambda: mul(neg(g), _conj(div(div(c.self, c.other), c.other)))),
             jvp=lambda c: div(sub(c.self_t, mul(c.other_t, c.result)), c.other))
DIV_SCALAR = OpSpec("DivBackward1", ("self",),
                    backward=lambda c, g: [div_scalar(g, _conj(c.other))],
                    jvp=lambda c: div_scalar(c.self_t, c.other))
NEG: OpSpec = OpSpec("NegBackward0", ("self",), backward=lambda c, g: [neg(g)],
                     jvp="auto_element_wise")
RECIPROCAL = OpSpec("ReciprocalBackward0", ("self",), {"self": ("result",)},
                    lambda c, g: [mul(neg(g), _conj(mul(c.result, c.result)))],
                    jvp="auto_element_wise")


def _conj(x: Any) -> Any:
    """derivatives.yaml's .conj() in a formula: the identity on real tensors and numbers."""
    if isinstance(x, Tensor):
        return complex_numbers.conj(x)
    return x.conjugate() if isinstance(x, complex) else x


def _zero_dtype(ts: list[Tensor]) -> Any:
    """The result dtype of a zerotensor kernel (see zero_tensor.on_meta)."""
    return _promotes([zero_tensor.on_meta(t) for t in ts])


def _times(g: Tensor, alpha: Number) -> Tensor:
    return g if alpha == 1 else mul_scalar(g, alpha)


def add(self: Any, other: Any, alpha: Number = 1, *, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return into_out("add", out, (self, other), lambda: add(self, other, alpha))
    if zero_tensor.is_zero(self) or zero_tensor.is_zero(other):
        ts = [wrap(self), wrap(other)]
        return record(ADD, zero_tensor.total(ts, _zero_dtype(ts), iterator_result, alpha), ts,
                      alpha=alpha)
    return _elementwise(ADD, lambda a, b: a + alpha * b if alpha != 1 else a + b,
                        (self, other), alpha=alpha)


def sub(self: Any, other: Any, alpha: Number = 1) -> Tensor:
    if zero_tensor.is_zero(self) or zero_tensor.is_zero(other):
        ts = [wrap(self), wrap(other)]
        return record(SUB, zero_tensor.total(ts, _zero_dtype(ts), iterator_result, alpha,
                                             subtract=True), ts, alpha=alpha)
    return _elementwise(SUB, lambda a, b: a - alpha * b if alpha != 1 else a - b,
                        (self, other), alpha=alpha)


def one_minus(self: Tensor) -> Tensor:
    """`1 - tensor` as C++ formulas write it: TensorOperators.h makes it
    empty_like(y).fill_(1).sub_(y), so SubBackward0 with no edge for the 1 (not
    AddBackward1 of a NegBackward0)."""
    return sub(new(np.ones_like(self._data), self.dtype, self.device), self)


def add_scalar(self: Tensor, other: Number) -> Tensor:
    """tensor + Scalar as C++ formulas write it (AddBackward1; the scalar is no input)."""
    dt = _promotes([self, wrap(other)])
    arr = _compute(lambda a: a + other, self._data.astype(dt.np))
    return record(ADD_SCALAR, iterator_result(arr, dt, self.device, [self]), [self],
                  other=other)


def sub_scalar(self: Tensor, other: Number) -> Tensor:
    """tensor - Scalar as C++ formulas write it (SubBackward1)."""
    dt = _promotes([self, wrap(other)])
    arr = _compute(lambda a: a - other, self._data.astype(dt.np))
    return record(SUB_SCALAR, iterator_result(arr, dt, self.device, [self]), [self],
                  other=other)


def rsub(self: Tensor, other: Tensor | Number, alpha: Number = 1) -> Tensor:
    """other - alpha * self: torch.rsub.Tensor, or .Scalar for a Python number other."""
    parse("rsub", (self, other), "Tensor input, Tensor other, *, Number alpha = 1",
          "Tensor input, Number other, Number alpha = 1")
    if isinstance(other, Tensor):
        # ATen's rsub is sub(other, self, alpha): other is TensorIterator's first operand,
        # whose layout the result takes
        out = _elementwise(None, lambda b, a: b - alpha * a if alpha != 1 else b - a,
                           (other, self))
        return record(RSUB, out, [self, other], alpha=alpha)
    dt = _promotes([self, wrap(other)])
    arr = _compute(lambda a: other - alpha * a, self._data.astype(dt.np))
    return record(RSUB_SCALAR, iterator_result(arr, dt, self.device, [self]), [self],
                  alpha=alpha, other=other)


def mul(self: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return into_out("mul", out, (self, other), lambda: mul(self, other))
    if zero_tensor.is_zero(self) or zero_tensor.is_zero(other):
        ts = [wrap(self), wrap(other)]
        return record(MUL, zero_tensor.product(ts, _zero_dtype(ts)), ts)
    return _elementwise(MUL, kernels.multiply, (self, other))


def mul_scalar(self: Tensor, other: Number) -> Tensor:
    """tensor * Scalar as ATen calls it internally (MulBackward1; the scalar is no input)."""
    if self._zerotensor:
        return record(MUL_SCALAR, zero_tensor.scaled(self, _zero_dtype([self, wrap(other)])),
                      [self], other=other)
    dt = _promotes([self, wrap(other)])
    arr = _compute(lambda a: kernels.multiply(a, other), self._data.astype(dt.np))
    return record(MUL_SCALAR, iterator_result(arr, dt, self.device, [self]), [self],
                  other=other)


def div(self: Any, other: Any) -> Tensor:
    """div.Tensor (DivBackward0); torch.div, which also takes a rounding_mode, is
    division.div."""
    ts = [wrap(self), wrap(other)]
    if zero_tensor.is_zero(self) or zero_tensor.is_zero(other):
        return record(DIV, zero_tensor.product(ts, _zero_dtype(ts), divide=True), ts)
    dt = _promotes(ts)
    return _elementwise(DIV, np.true_divide, ts,
                        compute_dtype=dt if dt.is_differentiable else dtypes.get_default_dtype())


def div_scalar(self: Tensor, other: Number) -> Tensor:
    arr = _compute(lambda a: a / other, self._data)
    return record(DIV_SCALAR, iterator_result(arr, _float_dtype(self), self.device, [self]),
                  [self], other=other)


def neg(self: Tensor) -> Tensor:
    if self.dtype is dtypes.bool_:
        raise RuntimeError(messages.NEG_BOOL)
    return _elementwise(NEG, np.negative, (self,))


def reciprocal(self: Tensor) -> Tensor:
    return _unary_float(RECIPROCAL, kernels.reciprocal, self)


# ---- pow ----------------------------------------------------------------------------

def _pow0_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    if c.exponent == 0:   # pow_backward: zeros_like(self, LEGACY_CONTIGUOUS_MEMORY_FORMAT)
        return [zeros_contiguous(c.self)]
    return [mul(g, _conj(mul_scalar(pow(c.self, c.exponent - 1), c.exponent)))]


def _log_base_term(base: Tensor | Number, exponent: Tensor, result: Tensor) -> Tensor:
    # d(b**e)/de = b**e * log(b), defined as 0 where b == 0 and e >= 0 (torch's convention;
    # a complex e counts as >= 0 when real and so). The base is taken in the promoted dtype
    # (FunctionsManual's pow_backward_exponent): a real negative base of a complex exponent
    # has the complex log (log(-1) = i pi).
    base_t = wrap(base)
    zero_base = comparisons.compare(base_t, 0, np.equal)
    if exponent.dtype.is_complex:
        e_ok = comparisons.compare(
            comparisons.compare(complex_numbers.imag(exponent), 0, np.equal),
            comparisons.compare(complex_numbers.real(exponent), 0, np.greater_equal),
            np.logical_and)
    else:
        e_ok = comparisons.compare(exponent, 0, np.greater_equal)
    cond = comparisons.compare(zero_base, e_ok, np.logical_and)
    if isinstance(base, Tensor):
        # (`self.to(at::result_type(self, exponent))`: a float16 base of a float64 exponent
        # takes its log in float64; not result's dtype, which an in-place pow_ keeps)
        promoted = _promotes([base_t, exponent])
        log_b: Any = log(base_t if base_t.dtype is promoted else copying.to(base_t, promoted))
    else:
        log_b = complex(np.log(complex(base))) if exponent.dtype.is_complex else \
            float(np.log(base))
    return comparisons.where(cond, zeros_scalar(result), mul(result, log_b))


POW0 = OpSpec("PowBackward0", ("self",), {"self": ("self",)}, _pow0_backward,
              jvp="auto_element_wise")
POW1: OpSpec = OpSpec(
    "PowBackward1", ("self", "exponent"),
    {"self": ("self", "exponent"), "exponent": ("self", "exponent", "result")},
    lambda c, g: c.grads(
        lambda: comparisons.where(comparisons.compare(c.exponent, 0, np.equal), zeros_scalar(g),
                      mul(g, _conj(mul(c.exponent, pow(c.self, sub_scalar(c.exponent, 1)))))),
        lambda: mul(g, _conj(_log_base_term(c.self, c.exponent, c.result)))),
    jvp=lambda c: _pow1_jvp(c))


def _pow1_jvp(c: Any) -> Tensor:
    """(pow_backward_self(self_t.conj(), ...) + pow_backward_exponent(exponent_t.conj(),
    ...)).conj(): the two backward formulas given the conjugated tangents, conjugated (the
    identity on real tensors)."""
    return _conj(add(POW1.backward(c, _conj(c.self_t))[0],
                     POW1.backward(c, _conj(c.exponent_t))[1]))
POW2 = OpSpec("PowBackward2", ("exponent",), {"exponent": ("exponent", "result")},
              lambda c, g: [mul(g, _conj(_log_base_term(c.self, c.exponent, c.result)
                                         if c.self == 0 else
                                         _mul_log_scalar(c.result, c.self, c.exponent)))],
              jvp="auto_element_wise")


def _mul_log_scalar(result: Tensor, base: Number, exponent: Tensor) -> Tensor:
    """result * log(base) for a Scalar base, whose log is complex for a complex exponent
    (base.toComplexDouble()): a Scalar product (MulBackward1) either way."""
    if exponent.dtype.is_complex or isinstance(base, complex):
        log_b: Any = complex(np.log(complex(base)))
    else:
        log_b = float(np.log(base))
    return mul_scalar(result, log_b)


def pow(self: Any, exponent: Any) -> Tensor:
    parse("pow", (self, exponent), f"Tensor input, Tensor exponent{OUT}",
          f"Number self, Tensor exponent{OUT}", f"Tensor input, Number exponent{OUT}")
    if isinstance(self, Tensor) and not isinstance(exponent, Tensor):
        return _elementwise(POW0, lambda a: np.power(a, exponent), (self,),
                            compute_dtype=_promotes([self, wrap(exponent)]), exponent=exponent)
    if isinstance(self, Tensor):
        return _elementwise(POW1, np.power, (self, exponent))
    # Python number ** tensor (torch.pow.Scalar): only the exponent has an edge.
    dt = _promotes([wrap(self), exponent])
    arr = _compute(lambda e: np.power(np.asarray(self, dtype=dt.np), e),
                   exponent._data.astype(dt.np))
    out = new(arr, dt, exponent.device)
    return record(POW2, out, [exponent], self=self)


# ---- unary elementwise --------------------------------------------------------------

def _unary_float(spec: OpSpec, fn: Callable[[np.ndarray], Any], self: Tensor,
                 rounded: bool = False) -> Tensor:
    dt = _float_dtype(self)
    if rounded and dt is dtypes.float32:
        # torch's float32 exp/log/sin/cos/tanh (SLEEF, within 1 ULP) are nearly always the
        # correctly rounded value; numpy's float32 SIMD loops are often 1 ULP off, which a
        # chain like exp(x * x) amplifies past the comparison's tolerance. Computing in
        # float64 and rounding once agrees with torch far more often.
        return _elementwise(spec, fn, (self,), out_dtype=dt, compute_dtype=dtypes.float64)
    return _elementwise(spec, fn, (self,), compute_dtype=dt)


# Annotated: inplace.py reads these unary specs, and mypy, checking the import circle, would
# meet them before it infers their type.
EXP: OpSpec = OpSpec("ExpBackward0", ("self",), {"self": ("result",)},
                     lambda c, g: [mul(g, _conj(c.result))], jvp="auto_element_wise")
LOG: OpSpec = OpSpec("LogBackward0", ("self",), {"self": ("self",)},
                     lambda c, g: [div(g, _conj(c.self))], jvp="auto_element_wise")
SQRT: OpSpec = OpSpec("SqrtBackward0", ("self",), {"self": ("result",)},
                      lambda c, g: [div(g, _conj(mul_scalar(c.result, 2)))],
                      jvp="auto_element_wise")
SIN: OpSpec = OpSpec("SinBackward0", ("self",), {"self": ("self",)},
                     lambda c, g: [mul(g, _conj(cos(c.self)))], jvp="auto_element_wise")
COS: OpSpec = OpSpec("CosBackward0", ("self",), {"self": ("self",)},
                     lambda c, g: [mul(g, neg(_conj(sin(c.self))))], jvp="auto_element_wise")
def exp(self: Tensor) -> Tensor:
    return _unary_float(EXP, np.exp, self, rounded=True)


def log(self: Tensor) -> Tensor:
    return _unary_float(LOG, np.log, self, rounded=True)


def sqrt(self: Tensor) -> Tensor:
    return _unary_float(SQRT, np.sqrt, self)


def sin(self: Tensor, *, out: Tensor | None = None) -> Tensor:
    if out is not None:   # sin.out (allow_mutation_on_saved_tensors' test writes through it)
        return into_out("sin", out, (self,), lambda: sin(self))
    return _unary_float(SIN, np.sin, self, rounded=True)


def cos(self: Tensor) -> Tensor:
    return _unary_float(COS, np.cos, self, rounded=True)


def refuse_complex_clamp(self: Tensor) -> None:
    """clamp's (and clamp_min's, clamp_max's, relu's) refusal of complex tensors."""
    if self.dtype.is_complex:
        raise NotImplementedError(messages.CLAMP_COMPLEX)


# They import this module; used at call time.
from . import (  # noqa: E402
    comparisons,
    complex_numbers,
    copying,
)
