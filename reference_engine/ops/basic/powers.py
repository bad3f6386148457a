"""pow: its three overloads (Tensor ** number, Tensor ** Tensor, number ** Tensor). Apart
from elementwise.py: the exponent's formula takes log of the base, and of a negative real
base it reads the exponent's parts (complex_imag.py) and compares (comparisons.py), which
are written on elementwise arithmetic."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import messages
from ...autograd_meta import OpSpec, record
from ...tensor import Tensor
from ..common import (
    OUT,
    Number,
    compute_on,
    elementwise_op,
    new,
    parse,
    result_dtype,
    wrap,
    zeros_contiguous,
    zeros_scalar,
)
from . import comparisons, complex_imag, complex_numbers, to_copy
from .elementwise import add, conj_of, log, mul, mul_scalar, sub_scalar


def _pow0_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    if c.exponent == 0:   # pow_backward: zeros_like(self, LEGACY_CONTIGUOUS_MEMORY_FORMAT)
        return [zeros_contiguous(c.self)]
    return [mul(g, conj_of(mul_scalar(pow(c.self, c.exponent - 1), c.exponent)))]


def _log_base_term(base: Tensor | Number, exponent: Tensor, result: Tensor) -> Tensor:
    # d(b**e)/de = b**e * log(b), defined as 0 where b == 0 and e >= 0 (torch's convention;
    # a complex e counts as >= 0 when real and so). The base is taken in the promoted dtype
    # (FunctionsManual's pow_backward_exponent): a real negative base of a complex exponent
    # has the complex log (log(-1) = i pi).
    base_t = wrap(base)
    zero_base = comparisons.compare(base_t, 0, np.equal)
    if exponent.dtype.is_complex:
        e_ok = comparisons.compare(
            comparisons.compare(complex_imag.imag(exponent), 0, np.equal),
            comparisons.compare(complex_numbers.real(exponent), 0, np.greater_equal),
            np.logical_and)
    else:
        e_ok = comparisons.compare(exponent, 0, np.greater_equal)
    cond = comparisons.compare(zero_base, e_ok, np.logical_and)
    if isinstance(base, Tensor):
        # (`self.to(at::result_type(self, exponent))`: a float16 base of a float64 exponent
        # takes its log in float64; not result's dtype, which an in-place pow_ keeps)
        promoted = result_dtype([base_t, exponent])
        log_b: Any = log(base_t if base_t.dtype is promoted else to_copy.to(base_t, promoted))
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
                      mul(g, conj_of(mul(c.exponent, pow(c.self, sub_scalar(c.exponent, 1)))))),
        lambda: mul(g, conj_of(_log_base_term(c.self, c.exponent, c.result)))),
    jvp=lambda c: _pow1_jvp(c))


def _pow1_jvp(c: Any) -> Tensor:
    """(pow_backward_self(self_t.conj(), ...) + pow_backward_exponent(exponent_t.conj(),
    ...)).conj(): the two backward formulas given the conjugated tangents, conjugated (the
    identity on real tensors)."""
    return conj_of(add(POW1.backward(c, conj_of(c.self_t))[0],
                       POW1.backward(c, conj_of(c.exponent_t))[1]))
POW2 = OpSpec("PowBackward2", ("exponent",), {"exponent": ("exponent", "result")},
              lambda c, g: [mul(g, conj_of(_log_base_term(c.self, c.exponent, c.result)
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


def _power(a: Any, b: Any) -> Any:
    """ATen's pow kernel: NumPy's, but an integer base to a negative integer exponent (where
    NumPy raises) is powi's (Pow.h): 1 for base 1, -1 or 1 for base -1 by the exponent's
    parity, else 0 (0 ** -1 included)."""
    a, b = np.asarray(a), np.asarray(b)
    if not (a.dtype.kind in "iu" and b.dtype.kind in "iu" and (b < 0).any()):
        return np.power(a, b)
    one = np.ones((), dtype=a.dtype)
    negative = np.where(a == 1, one, np.where(a == -1, np.where(b & 1, -one, one), 0 * one))
    return np.where(b < 0, negative, np.power(a, np.maximum(b, 0)))


def pow(self: Any, exponent: Any) -> Tensor:
    parse("pow", (self, exponent), f"Tensor input, Tensor exponent{OUT}",
          f"Number self, Tensor exponent{OUT}", f"Tensor input, Number exponent{OUT}")
    if isinstance(self, Tensor) and not isinstance(exponent, Tensor):
        # pow.Tensor_Scalar's meta function ("Numpy compatibility check"); a bool base counts
        if self.dtype.category <= 1 and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError(messages.POW_INTEGER_NEGATIVE_EXPONENT)
        return elementwise_op(POW0, lambda a: np.power(a, exponent), (self,),
                            compute_dtype=result_dtype([self, wrap(exponent)]), exponent=exponent)
    if isinstance(self, Tensor):
        return elementwise_op(POW1, _power, (self, exponent))
    # Python number ** tensor (torch.pow.Scalar): only the exponent has an edge.
    dt = result_dtype([wrap(self), exponent])
    arr = compute_on(lambda e: _power(np.asarray(self, dtype=dt.np), e),
                   exponent._data.astype(dt.np))
    out = new(arr, dt, exponent.device)
    return record(POW2, out, [exponent], self=self)
