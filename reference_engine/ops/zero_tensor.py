"""ATen's ZeroTensor as forward mode shows it. The tangent a jvp formula reads for an input
without one is not dense zeros but `at::_efficientzerotensor` of the input's shape and dtype
(autograd's generated code: `x_t_raw.defined() ? x_t_raw : _efficientzerotensor(...)`), a
tensor known to be zero whatever it meets. The ops with a kernel for the ZeroTensor key
that formulas reach treat it so (aten/src/ATen/native/BinaryOps.cpp):

- mul, and div of a zero: a new ZeroTensor of the broadcast shape and promoted dtype
  (contiguous): `0 * nan` is 0, so a NaN primal does not reach a tangent through a missing
  tangent's term (mul's `other_t * self_p + self_t * other_p`);
- div by a zero: full of inf (of NaN for zero by zero);
- add and sub with one zero operand: the other operand copied, `_to_copy(other.expand(shape))`
  (times the sign and alpha the op gives it), laid out as `_to_copy` lays out a copy: the
  operand's strides when it is dense, else infer_dense_strides (TensorIterator's order of one
  operand); so the tangent keeps the other term's layout, not the layout an add of two dense
  operands would give it, which decides whether set_fw_grad copies it (its version);
- mul by a Scalar: a ZeroTensor.

Every other op reads it as the contiguous zeros it holds (ZeroTensorFallback materializes it
as at::zeros). The autograd node of an op is recorded above these kernels, as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..dtypes import dtype
from ..tensor import Tensor

Number = int | float | bool
# common.iterator_result, passed in by the caller (this module stays out of the ops' import
# circle): an elementwise result laid out as TensorIterator lays out its operands'
LayOut = Callable[[Any, dtype, Any, Sequence[Tensor]], Tensor]


def is_zero(x: Any) -> bool:
    return isinstance(x, Tensor) and x._zerotensor


def on_meta(t: Tensor) -> Tensor:
    """An operand as the zerotensor kernels promote it: they run the op on the operands
    moved to the meta device (`to`), which keeps no wrapped-number mark, so a Python scalar
    (mul.Scalar's, or an operand of mul.Tensor) is a plain 0-d tensor there that no longer
    loses type promotion: a 0-d float32 ZeroTensor times 0.5 is float64, a 1-d one float32.
    (A wrapped ZeroTensor is forward_ad's stand-in for a Python scalar operand's tangent,
    which torch's Scalar overloads do not have at all: it keeps losing.)"""
    if not t._wrapped_number or t._zerotensor:
        return t
    return Tensor(t._data, t.dtype, t.device)


def zeros(shape: tuple[int, ...], dt: dtype, device: Any) -> Tensor:
    """`_efficientzerotensor(shape)`: contiguous zeros, marked."""
    out = Tensor(np.zeros(shape, dtype=dt.np), dt, device)
    out._zerotensor = True
    return out


def _shape(ts: Sequence[Tensor]) -> tuple[int, ...]:
    """The result's shape (ATen runs the op on meta tensors for it and the dtype)."""
    return tuple(np.broadcast_shapes(*(t._data.shape for t in ts)))


def product(ts: Sequence[Tensor], dt: dtype, divide: bool = False) -> Tensor:
    """mul_zerotensor, div_zerotensor of the wrapped operands `ts` with result dtype `dt`:
    the result without its node."""
    shape = _shape(ts)
    if divide and not dt.is_floating_point and not dt.is_complex:
        dt = dtypes.get_default_dtype()
    if divide and is_zero(ts[1]):
        fill = np.nan if is_zero(ts[0]) else np.inf
        return Tensor(np.full(shape, fill, dtype=dt.np), dt, ts[0].device)
    return zeros(shape, dt, ts[0].device)


def scaled(self: Tensor, dt: dtype) -> Tensor:
    """mul.Scalar of a ZeroTensor (result dtype `dt`)."""
    return zeros(tuple(self.shape), dt, self.device)


def total(ts: Sequence[Tensor], dt: dtype, lay_out: LayOut, alpha: Number,
          subtract: bool = False) -> Tensor:
    """add_zerotensor (sub's is add's with -alpha) of the wrapped operands `ts`: the result
    without its node."""
    shape = _shape(ts)
    if is_zero(ts[0]) and is_zero(ts[1]):
        return zeros(shape, dt, ts[0].device)
    factor: Number = 1
    if is_zero(ts[1]):
        kept = ts[0]
    else:
        kept, factor = ts[1], -alpha if subtract else alpha
    expanded = np.broadcast_to(kept._data, shape)
    values = expanded.astype(dt.np)
    if factor != 1:
        values = values * np.asarray(factor).astype(dt.np)
    return lay_out(values, dt, kept.device, [Tensor(expanded, kept.dtype, kept.device)])
