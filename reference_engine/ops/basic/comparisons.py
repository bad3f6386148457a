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
    _elementwise,
    _promotes,
    broadcast_shapes,
    common_device,
    iterator_result,
    new,
    wrap,
    written_in_place,
    zeros_scalar,
)
from .copying import to
from .elementwise import add, div_scalar, mul, sub

# the ordering comparisons, by ATen's kernel names: no complex kernel
_ORDERINGS: dict[object, str] = {np.less: "lt_cpu", np.less_equal: "le_cpu",
                                  np.greater: "gt_cpu", np.greater_equal: "ge_cpu"}


def compare(self: Any, other: Any, fn: Callable[..., Any]) -> Tensor:
    kernel = _ORDERINGS.get(fn)
    if kernel is not None:
        dt = _promotes([wrap(self), wrap(other)])
        if dt.is_complex:
            raise NotImplementedError(messages.kernel_not_implemented(kernel, dt.scalar_name))
    return _elementwise(None, fn, (self, other), out_dtype=dtypes.bool_)


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
    dt = _promotes([a, b])
    dev = common_device([condition, a, b])
    # TensorIterator's shape, folded over condition, self, other: its error, not NumPy's
    broadcast_shapes(tuple(condition.shape), tuple(a.shape), tuple(b.shape))
    out = iterator_result(np.where(condition._data, a._data.astype(dt.np),
                                   b._data.astype(dt.np)), dt, dev, [condition, a, b])
    return record(WHERE, out, [a, b], condition=condition)


def _max_backward(c: Any, g: Tensor, keep: Callable[..., Any]) -> Tensor:
    """at::where(self == other, grad / 2, grad).masked_fill_(<loses>, 0)."""
    x, y = c.self, c.other
    halved = where(compare(x, y, np.equal), div_scalar(g, 2), g)
    return written_in_place(indexing.masked_fill(halved, compare(x, y, keep), 0))


MAXIMUM = OpSpec("MaximumBackward0", ("self", "other"),
                 {"self": ("self", "other"), "other": ("self", "other")},
                 lambda c, g: c.grads(lambda: _max_backward(c, g, np.less),
                                      lambda: _max_backward(c, g, np.greater)),
                 jvp=lambda c: _max_jvp(c, np.greater))
MINIMUM = OpSpec("MinimumBackward0", ("self", "other"),
                 {"self": ("self", "other"), "other": ("self", "other")},
                 lambda c, g: c.grads(lambda: _max_backward(c, g, np.greater),
                                      lambda: _max_backward(c, g, np.less)),
                 jvp=lambda c: _max_jvp(c, np.less))


def _max_jvp(c: Any, wins: Callable[..., Any]) -> Tensor:
    """other_t + where(self == other, 0.5, wins(self, other)) * (self_t - other_t)"""
    dt = c.result.dtype
    share = where(compare(c.self, c.other, np.equal), new(0.5, dt, c.result.device),
                  to(compare(c.self, c.other, wins), dt))
    return add(c.other_t, mul(share, sub(c.self_t, c.other_t)))


def _keep_first(pick: Callable[..., Any]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """ATen's scalar maximum/minimum: NaN if either is NaN, else std::max(a, b), which keeps
    the first operand on ties (maximum(-0., 0.) is -0.). torch's vectorized loop (whole
    SIMD vectors of contiguous elements, 16 float32 / 8 float64 with AVX512) takes the second
    operand on ties instead; that CPU-dependent path is not modelled."""
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_arrays(a, b)
        return np.where(np.isnan(a) | np.isnan(b), a + b, np.where(pick(b, a), b, a))
    return fn


def maximum(self: Tensor, other: Tensor) -> Tensor:
    return _elementwise(MAXIMUM, _keep_first(np.greater), (self, other))


def minimum(self: Tensor, other: Tensor) -> Tensor:
    return _elementwise(MINIMUM, _keep_first(np.less), (self, other))


# They import this module; used at call time.
from . import indexing  # noqa: E402
