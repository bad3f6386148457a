"""atan2, the two-argument arctangent (its own family: a binary op of trigonometry, real types
only). Forward in numpy, backward and jvp written in engine ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec
from ..tensor import Tensor
from .basic import comparisons, indexing
from .basic.elementwise import add, div, mul, neg, reciprocal
from .basic.powers import pow
from .common import elementwise_op, result_dtype, wrap


def _atan2_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """FunctionsManual atan2_backward: both grads scale by the reciprocal of self^2 + other^2,
    masked to 0 where that is 0, so atan2(0, 0) has a zero gradient rather than NaN."""
    denom = add(mul(c.self, c.self), mul(c.other, c.other))
    recip = indexing.masked_fill(reciprocal(denom), comparisons.compare(denom, 0, np.equal), 0)
    return c.grads(lambda: mul(mul(g, c.other), recip),
                   lambda: mul(mul(g, neg(c.self)), recip))


ATAN2 = OpSpec("Atan2Backward0", ("self", "other"),
               {"self": ("self", "other"), "other": ("self", "other")}, _atan2_backward,
               jvp=lambda c: div(add(mul(neg(c.self), c.other_t), mul(c.other, c.self_t)),
                                 add(pow(c.self, 2), pow(c.other, 2))))


def atan2(self: Tensor, other: Tensor) -> Tensor:
    ts = [wrap(self), wrap(other)]
    dt = result_dtype(ts)
    if dt.is_complex:   # its kernel is dispatched for real types only
        raise NotImplementedError(messages.kernel_not_implemented("atan2_cpu", dt.scalar_name))
    dt = dt if dt.is_floating_point else dtypes.get_default_dtype()   # integers give floats
    # computed in float64 and rounded: NumPy's float32 arctan2 differs from torch's kernel
    # in 37 % of float32 values, the rounded float64 one in 0.6 % (100,000 values in
    # [-4, 4) x [-0.5, 0.5)); a later op magnifies the ulp (the generator: sinh of rad2deg)
    return elementwise_op(ATAN2, np.arctan2, ts, out_dtype=dt,
                          compute_dtype=dtypes.float64 if dt is dtypes.float32 else dt)
