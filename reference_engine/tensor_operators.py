"""Tensor's hand-written methods that only adapt a call to an op: the argument adapters
(another argument order, varargs shapes, conversions) and the Python operators.

Plain functions, bound in Tensor's class body (tensor.py), which applies the operator
slots' NotImplemented rule (`_operator`). Tensor is created before the ops exist (they
import it), so each function imports its op at call time.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from .dtypes import device

if TYPE_CHECKING:
    from .tensor import Tensor


def _shape_args(args: tuple[Any, ...]) -> tuple[builtins.int, ...]:
    """Accept both f(2, 3) and f((2, 3)) like torch."""
    # builtins.int: int is Tensor.int below
    if len(args) == 1 and isinstance(args[0], tuple | list):
        return tuple(builtins.int(a) for a in args[0])
    return tuple(builtins.int(a) for a in args)


# ---- argument adapters --------------------------------------------------------------
def where(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    from .ops import comparisons
    return comparisons.where(condition, self, other)


def cpu(self: Tensor) -> Tensor:
    if self._device == dtypes.CPU:
        return self  # what copying.to returns for a tensor already there, without parsing
    from .ops import copying
    return copying.to(self, device("cpu"))


def cuda(self: Tensor) -> Tensor:
    from .ops import copying
    return copying.to(self, device("cuda"))


def long(self: Tensor) -> Tensor:
    from .ops import copying
    return copying.to(self, dtypes.int64)


def int(self: Tensor) -> Tensor:
    from .ops import copying
    return copying.to(self, dtypes.int32)


def bool(self: Tensor) -> Tensor:
    from .ops import copying
    return copying.to(self, dtypes.bool_)


def equal(self: Tensor, other: Tensor) -> builtins.bool:
    from .ops import comparisons
    return comparisons.equal(self, other)


def eq_(self: Tensor, other: Any) -> Tensor:
    from . import inplace_ops
    return inplace_ops.eq_(self, other)


def allclose(self: Tensor, other: Tensor, rtol: builtins.float = 1e-05,
             atol: builtins.float = 1e-08) -> builtins.bool:
    from .ops import comparisons
    return comparisons.allclose(self, other, rtol, atol)


def permute(self: Tensor, *dims: Any) -> Tensor:
    from . import views
    return views.permute(self, _shape_args(dims))


def view(self: Tensor, *shape: Any) -> Tensor:
    from . import views
    return views.view(self, _shape_args(shape))


def reshape(self: Tensor, *shape: Any) -> Tensor:
    from . import views
    return views.reshape(self, _shape_args(shape))


def view_as(self: Tensor, other: Tensor) -> Tensor:
    from . import views
    return views.view(self, tuple(other.shape))


def expand(self: Tensor, *sizes: Any) -> Tensor:
    from . import views
    return views.expand(self, _shape_args(sizes))


def __getitem__(self: Tensor, index: Any) -> Tensor:
    from . import views_indexing
    return views_indexing.getitem(self, index)


def __setitem__(self: Tensor, index: Any, value: Any) -> None:
    from . import inplace_ops
    inplace_ops.setitem(self, index, value)


# ---- Python operators -----------------------------------------------------------------
def __add__(self: Tensor, other: Any) -> Tensor:
    from .ops import elementwise as ops
    return ops.add(self, other)


def __radd__(self: Tensor, other: Any) -> Tensor:
    from .ops import elementwise as ops
    return ops.add(self, other)


def __sub__(self: Tensor, other: Any) -> Tensor:
    from .ops import elementwise as ops
    return ops.sub(self, other)


def __rsub__(self: Tensor, other: Any) -> Tensor:
    from .ops import elementwise as ops
    return ops.rsub(self, other)


def __mul__(self: Tensor, other: Any) -> Tensor:
    from .ops import elementwise as ops
    return ops.mul(self, other)


def __rmul__(self: Tensor, other: Any) -> Tensor:
    from .ops import elementwise as ops
    return ops.mul(self, other)


def __truediv__(self: Tensor, other: Any) -> Tensor:
    from .ops import elementwise as ops
    return ops.div(self, other)


def __rtruediv__(self: Tensor, other: Any) -> Tensor:
    # torch/_tensor.py's __rdiv__: self.reciprocal() * other (ReciprocalBackward0,
    # MulBackward0; a self that is no Tensor meets the AttributeError)
    return self.reciprocal() * other  # type: ignore[attr-defined]


__rdiv__ = __rtruediv__


def __pow__(self: Tensor, exponent: Any) -> Tensor:
    from .ops import elementwise as ops
    return ops.pow(self, exponent)


def __rpow__(self: Tensor, base: Any) -> Tensor:
    from .ops import elementwise as ops
    return ops.pow(base, self)


def __rmod__(self: Tensor, other: Any) -> Tensor:
    from .ops import binary_math
    return binary_math.remainder(other, self)


def __neg__(self: Tensor) -> Tensor:
    from .ops import elementwise as ops
    return ops.neg(self)


def __abs__(self: Tensor) -> Tensor:
    from .ops import elementwise as ops
    return ops.abs(self)


def __iadd__(self: Tensor, other: Any) -> Tensor:
    from . import inplace_ops
    return inplace_ops.add_(self, other, 1)


def __isub__(self: Tensor, other: Any) -> Tensor:
    from . import inplace_ops
    return inplace_ops.sub_(self, other, 1)


def __imul__(self: Tensor, other: Any) -> Tensor:
    from . import inplace_ops
    return inplace_ops.mul_(self, other)


def __itruediv__(self: Tensor, other: Any) -> Tensor:
    from . import inplace_ops
    return inplace_ops.div_(self, other)


def __lt__(self: Tensor, other: Any) -> Tensor:
    from .ops import comparisons
    return comparisons.compare(self, other, np.less)


def __le__(self: Tensor, other: Any) -> Tensor:
    from .ops import comparisons
    return comparisons.compare(self, other, np.less_equal)


def __gt__(self: Tensor, other: Any) -> Tensor:
    from .ops import comparisons
    return comparisons.compare(self, other, np.greater)


def __ge__(self: Tensor, other: Any) -> Tensor:
    from .ops import comparisons
    return comparisons.compare(self, other, np.greater_equal)


def __eq__(self: Tensor, other: Any) -> Tensor:
    from .ops import comparisons
    return comparisons.compare(self, other, np.equal)


def __ne__(self: Tensor, other: Any) -> Tensor:
    from .ops import comparisons
    return comparisons.compare(self, other, np.not_equal)


def __invert__(self: Tensor) -> Tensor:
    from .ops import comparisons
    return comparisons.logical_not(self)


def __and__(self: Tensor, other: Any) -> Tensor:
    from .ops import comparisons
    return comparisons.compare(self, other, np.logical_and)


def __or__(self: Tensor, other: Any) -> Tensor:
    from .ops import comparisons
    return comparisons.compare(self, other, np.logical_or)
