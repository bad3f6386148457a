"""Comparisons and other non-differentiable results (compare, logical_not, signbit, isnan,
equal, allclose), where, and maximum/minimum, whose grads go to the input that won."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import dtypes, messages
from ...autograd_meta import OpSpec, record
from ...tensor import Tensor
from ..common import (
    broadcast_shapes,
    common_device,
    elementwise_op,
    iterator_result,
    new,
    result_dtype,
    wrap,
    zeros_scalar,
)
from .to_copy import to

# the ordering comparisons, by ATen's kernel names: no complex kernel
_ORDERINGS: dict[object, str] = {np.less: "lt_cpu", np.less_equal: "le_cpu",
                                  np.greater: "gt_cpu", np.greater_equal: "ge_cpu"}


def compare(self: Any, other: Any, fn: Callable[..., Any]) -> Tensor:
    kernel = _ORDERINGS.get(fn)
    if kernel is not None:
        dt = result_dtype([wrap(self), wrap(other)])
        if dt.is_complex:
            raise NotImplementedError(messages.kernel_not_implemented(kernel, dt.scalar_name))
    return elementwise_op(None, fn, (self, other), out_dtype=dtypes.bool_)


def logical_not(self: Tensor) -> Tensor:
    return new(np.logical_not(self._data), dtypes.bool_, self.device)


def signbit(self: Tensor) -> Tensor:
    return new(np.signbit(self._data), dtypes.bool_, self.device)


def isnan(self: Tensor) -> Tensor:
    return new(np.isnan(self._data), dtypes.bool_, self.device)


def equal(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a._data, b._data))


def allclose(a: Tensor, b: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    return bool(np.allclose(a._data, b._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


WHERE = OpSpec("WhereBackward0", ("self", "other"),
               {"self": ("condition",), "other": ("condition",)},
               lambda c, g: c.grads(lambda: where(c.condition, g, zeros_scalar(g)),
                                    lambda: where(c.condition, zeros_scalar(g), g)),
               jvp=lambda c: _where_jvp(c))


def _where_jvp(c: Any) -> Tensor:
    """where(condition, self_t, other_t), in the result's dtype: a number's tangent is zeros
    of its wrapped dtype (float64 for logdet's nan), which must not promote a float32
    tangent as it did not promote the result."""
    out = where(c.condition, c.self_t, c.other_t)
    return out if out.dtype is c.result.dtype else to(out, c.result.dtype)


def where(condition: Tensor, self: Any, other: Any) -> Tensor:
    a, b = wrap(self), wrap(other)
    dt = result_dtype([a, b])
    dev = common_device([condition, a, b])
    # TensorIterator's shape, folded over condition, self, other: its error, not NumPy's
    broadcast_shapes(tuple(condition.shape), tuple(a.shape), tuple(b.shape))
    out = iterator_result(np.where(condition._data, a._data.astype(dt.np),
                                   b._data.astype(dt.np)), dt, dev, [condition, a, b])
    return record(WHERE, out, [a, b], condition=condition)

