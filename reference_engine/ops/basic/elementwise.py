"""Elementwise ops: arithmetic (torch.div, which takes a rounding mode: division.py; pow:
powers.py), unary functions (clamp: piecewise.py; atan2: atan2.py). Forward in numpy
(kernels.py where numpy's own differs from torch's), backward written in engine ops.

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
    Number,
    compute_on,
    elementwise_op,
    float_dtype,
    iterator_result,
    new,
    parse,
    result_dtype,
    wrap,
)
from ..out_overloads import into_out
from . import complex_numbers, copying

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
             lambda c, g: c.grads(lambda: mul(g, conj_of(c.other)),
                                  lambda: mul(g, conj_of(c.self))),
             jvp=lambda c: add(mul(c.other_t, c.self), mul(c.self_t, c.other)))
MUL_SCALAR = OpSpec("MulBackward1", ("self",),
                    backward=lambda c, g: [mul_scalar(g, conj_of(c.other))],
                    jvp=lambda c: mul_scalar(c.self_t, c.other))
DIV = OpSpec("DivBackward0", ("self", "other"), {"self": ("other",), "other": ("self", "other")},
             lambda c, g: c.grads(lambda: div(g, conj_of(c.other)),
                                  lambda: mul(neg(g), conj_of(div(div(c.self, c.other), c.other)))),
             jvp=lambda c: div(sub(c.self_t, mul(c.other_t, c.result)), c.other))
DIV_SCALAR = OpSpec("DivBackward1", ("self",),
                    backward=lambda c, g: [div_scalar(g, conj_of(c.other))],
                    jvp=lambda c: div_scalar(c.self_t, c.other))
NEG: OpSpec = OpSpec("NegBackward0", ("self",), backward=lambda c, g: [neg(g)],
                     jvp="auto_element_wise")
RECIPROCAL = OpSpec("ReciprocalBackward0", ("self",), {"self": ("result",)},
                    lambda c, g: [mul(neg(g), conj_of(mul(c.result, c.result)))],
                    jvp="auto_element_wise")


def conj_of(x: Any) -> Any:
    """derivatives.yaml's .conj() in a formula: the identity on real tensors and numbers."""
    if isinstance(x, Tensor):
        return complex_numbers.conj(x)
    return x.conjugate() if isinstance(x, complex) else x


def _zero_dtype(ts: list[Tensor]) -> Any:
    """The result dtype of a zerotensor kernel (see zero_tensor.on_meta)."""
    return result_dtype([zero_tensor.on_meta(t) for t in ts])


def _complex(a: Any, b: Any) -> bool:
    return bool(np.iscomplexobj(a) or np.iscomplexobj(b))


def _times(g: Tensor, alpha: Number) -> Tensor:
    return g if alpha == 1 else mul_scalar(g, alpha)


def add(self: Any, other: Any, alpha: Number = 1, *, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return into_out("add", out, (self, other), lambda: add(self, other, alpha))
    if zero_tensor.is_zero(self) or zero_tensor.is_zero(other):
        ts = [wrap(self), wrap(other)]
        return record(ADD, zero_tensor.total(ts, _zero_dtype(ts), iterator_result, alpha), ts,
                      alpha=alpha)
    # ATen's add kernel computes self + alpha * other, for a complex result with alpha
    # (1 + 0j) too: inf * 0 makes NaN parts (inf+pi j + itself is inf+nan j in torch)
    return elementwise_op(ADD, lambda a, b: a + alpha * b if alpha != 1 or _complex(a, b)
                          else a + b, (self, other), alpha=alpha)


def sub(self: Any, other: Any, alpha: Number = 1) -> Tensor:
    if zero_tensor.is_zero(self) or zero_tensor.is_zero(other):
        ts = [wrap(self), wrap(other)]
        return record(SUB, zero_tensor.total(ts, _zero_dtype(ts), iterator_result, alpha,
                                             subtract=True), ts, alpha=alpha)
    # ATen's sub is add's kernel with -alpha: self + (-alpha) * other, which for a complex
    # result differs from self - alpha * other in a zero's sign ((-0-0j) - itself is 0+0j
    # in torch, whose log is -inf+0j; -0+0j the other way, whose log is -inf+pi j)
    return elementwise_op(SUB, lambda a, b: a + (-alpha) * b if _complex(a, b)
                          else a - alpha * b if alpha != 1 else a - b,
                          (self, other), alpha=alpha)


def one_minus(self: Tensor) -> Tensor:
    """`1 - tensor` as C++ formulas write it: TensorOperators.h makes it
    empty_like(y).fill_(1).sub_(y), so SubBackward0 with no edge for the 1 (not
    AddBackward1 of a NegBackward0)."""
    return sub(new(np.ones_like(self._data), self.dtype, self.device), self)


def add_scalar(self: Tensor, other: Number) -> Tensor:
    """tensor + Scalar as C++ formulas write it (AddBackward1; the scalar is no input)."""
    dt = result_dtype([self, wrap(other)])
    arr = compute_on(lambda a: a + other, self._data.astype(dt.np))
    return record(ADD_SCALAR, iterator_result(arr, dt, self.device, [self]), [self],
                  other=other)


def sub_scalar(self: Tensor, other: Number) -> Tensor:
    """tensor - Scalar as C++ formulas write it (SubBackward1)."""
    dt = result_dtype([self, wrap(other)])
    arr = compute_on(lambda a: a - other, self._data.astype(dt.np))
    return record(SUB_SCALAR, iterator_result(arr, dt, self.device, [self]), [self],
                  other=other)


def rsub(self: Tensor, other: Tensor | Number, alpha: Number = 1) -> Tensor:
    """other - alpha * self: torch.rsub.Tensor, or .Scalar for a Python number other."""
    parse("rsub", (self, other), "Tensor input, Tensor other, *, Number alpha = 1",
          "Tensor input, Number other, Number alpha = 1")
    if isinstance(other, Tensor):
        # ATen's rsub is sub(other, self, alpha): other is TensorIterator's first operand,
        # whose layout the result takes
        out = elementwise_op(None, lambda b, a: b - alpha * a if alpha != 1 else b - a,
                             (other, self))
        return record(RSUB, out, [self, other], alpha=alpha)
    dt = result_dtype([self, wrap(other)])
    arr = compute_on(lambda a: other - alpha * a, self._data.astype(dt.np))
    return record(RSUB_SCALAR, iterator_result(arr, dt, self.device, [self]), [self],
                  alpha=alpha, other=other)


def mul(self: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return into_out("mul", out, (self, other), lambda: mul(self, other))
    if zero_tensor.is_zero(self) or zero_tensor.is_zero(other):
        ts = [wrap(self), wrap(other)]
        return record(MUL, zero_tensor.product(ts, _zero_dtype(ts)), ts)
    return elementwise_op(MUL, kernels.multiply, (self, other))


def mul_scalar(self: Tensor, other: Number) -> Tensor:
    """tensor * Scalar as ATen calls it internally (MulBackward1; the scalar is no input)."""
    if self._zerotensor:
        return record(MUL_SCALAR, zero_tensor.scaled(self, _zero_dtype([self, wrap(other)])),
                      [self], other=other)
    dt = result_dtype([self, wrap(other)])
    arr = compute_on(lambda a: kernels.multiply(a, other), self._data.astype(dt.np))
    return record(MUL_SCALAR, iterator_result(arr, dt, self.device, [self]), [self],
                  other=other)


def div(self: Any, other: Any) -> Tensor:
    """div.Tensor (DivBackward0); torch.div, which also takes a rounding_mode, is
    division.div."""
    ts = [wrap(self), wrap(other)]
    if zero_tensor.is_zero(self) or zero_tensor.is_zero(other):
        return record(DIV, zero_tensor.product(ts, _zero_dtype(ts), divide=True), ts)
    dt = result_dtype(ts)
    return elementwise_op(DIV, np.true_divide, ts,
                          compute_dtype=dt if dt.is_differentiable else dtypes.get_default_dtype())


def div_scalar(self: Tensor, other: Number) -> Tensor:
    arr = compute_on(lambda a: a / other, self._data)
    return record(DIV_SCALAR, iterator_result(arr, float_dtype(self), self.device, [self]),
                  [self], other=other)


def neg(self: Tensor) -> Tensor:
    if self.dtype is dtypes.bool_:
        raise RuntimeError(messages.NEG_BOOL)
    return elementwise_op(NEG, np.negative, (self,))


def reciprocal(self: Tensor) -> Tensor:
    return unary_float(RECIPROCAL, kernels.reciprocal, self)


# ---- pow ----------------------------------------------------------------------------


# ---- unary elementwise --------------------------------------------------------------

def unary_float(spec: OpSpec, fn: Callable[[np.ndarray], Any], self: Tensor,
                 rounded: bool = False) -> Tensor:
    dt = float_dtype(self)
    if rounded and dt is dtypes.float32:
        # torch's float32 exp/log/sin/cos/tanh (SLEEF, within 1 ULP) are nearly always the
        # correctly rounded value; numpy's float32 SIMD loops are often 1 ULP off, which a
        # chain like exp(x * x) amplifies past the comparison's tolerance. Computing in
        # float64 and rounding once agrees with torch far more often.
        return elementwise_op(spec, fn, (self,), out_dtype=dt, compute_dtype=dtypes.float64)
    return elementwise_op(spec, fn, (self,), compute_dtype=dt)


# Annotated: inplace.py reads these unary specs, and mypy, checking the import circle, would
# meet them before it infers their type.
EXP: OpSpec = OpSpec("ExpBackward0", ("self",), {"self": ("result",)},
                     lambda c, g: [mul(g, conj_of(c.result))], jvp="auto_element_wise")
LOG: OpSpec = OpSpec("LogBackward0", ("self",), {"self": ("self",)},
                     lambda c, g: [div(g, conj_of(c.self))], jvp="auto_element_wise")
SQRT: OpSpec = OpSpec("SqrtBackward0", ("self",), {"self": ("result",)},
                      # derivatives.yaml's grad / (2 * result.conj()): conj, then the
                      # scalar product (a double backward's graph shows the order)
                      lambda c, g: [div(g, mul_scalar(conj_of(c.result), 2))],
                      jvp="auto_element_wise")
SIN: OpSpec = OpSpec("SinBackward0", ("self",), {"self": ("self",)},
                     lambda c, g: [mul(g, conj_of(cos(c.self)))], jvp="auto_element_wise")
COS: OpSpec = OpSpec("CosBackward0", ("self",), {"self": ("self",)},
                     lambda c, g: [mul(g, neg(conj_of(sin(c.self))))], jvp="auto_element_wise")
def exp(self: Tensor) -> Tensor:
    return unary_float(EXP, np.exp, self, rounded=True)


def log(self: Tensor) -> Tensor:
    return unary_float(LOG, np.log, self, rounded=True)


def sqrt(self: Tensor) -> Tensor:
    return unary_float(SQRT, np.sqrt, self)


def sin(self: Tensor, *, out: Tensor | None = None) -> Tensor:
    if out is not None:   # sin.out (allow_mutation_on_saved_tensors' test writes through it)
        return into_out("sin", out, (self,), lambda: sin(self))
    return unary_float(SIN, np.sin, self, rounded=True)


def cos(self: Tensor) -> Tensor:
    return unary_float(COS, np.cos, self, rounded=True)


def refuse_complex_clamp(self: Tensor) -> None:
    """clamp's (and clamp_min's, clamp_max's, relu's) refusal of complex tensors."""
    if self.dtype.is_complex:
        raise NotImplementedError(messages.CLAMP_COMPLEX)

