"""Tensor's hand-written methods that only adapt a call to an op: the matrix views (x.T,
mT, mH, adjoint, H), the argument adapters (another argument order, varargs shapes,
conversions) and the Python operators.

Plain functions, bound in Tensor's class body (tensor.py), which applies the operator
slots' NotImplemented rule (`_operator`). The ops sit a layer up (they import Tensor), so
each function calls its op through dispatch.py's table.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dispatch, dtypes, messages
from .dtypes import device
from .warn import warn_once

if TYPE_CHECKING:
    from .tensor import Tensor


def shape_args(args: tuple[Any, ...]) -> tuple[builtins.int, ...]:
    """Accept both f(2, 3) and f((2, 3)) like torch."""
    # builtins.int: int is Tensor.int below
    if len(args) == 1 and isinstance(args[0], tuple | list):
        return tuple(builtins.int(a) for a in args[0])
    return tuple(builtins.int(a) for a in args)


# ---- matrix views: x.T, mT, mH, adjoint, H (all but adjoint bound as properties) ----
def T(self: Tensor) -> Tensor:
    if self.ndim == 0:
        warn_once(messages.NUMPY_T_0D)
    elif self.ndim != 2:
        warn_once(messages.NUMPY_T_NOT_MATRIX)
    return dispatch.permute(self, tuple(reversed(range(self.ndim))))


def mT(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError(messages.matrix_property("mT", self.ndim))
    return dispatch.transpose(self, -2, -1)


def mH(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError(messages.matrix_property("mH", self.ndim))
    return self.adjoint()


def adjoint(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError(messages.matrix_property("adjoint()", self.ndim))
    # torch's adjoint is transpose, then a conj view on complex (ConjBackward0 on top)
    out = dispatch.transpose(self, -2, -1)
    return dispatch.conj(out) if self._dtype.is_complex else out


def H(self: Tensor) -> Tensor:
    if self.ndim != 2:
        raise RuntimeError(messages.h_not_matrix(self.ndim))
    return self.adjoint()


# ---- argument adapters --------------------------------------------------------------
def where(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    return dispatch.where(condition, self, other)


def cpu(self: Tensor) -> Tensor:
    if self._device == dtypes.CPU:
        return self  # what copying.to returns for a tensor already there, without parsing
    return dispatch.to(self, device("cpu"))


def cuda(self: Tensor) -> Tensor:
    return dispatch.to(self, device("cuda"))


def long(self: Tensor) -> Tensor:
    return dispatch.to(self, dtypes.int64)


def int(self: Tensor) -> Tensor:
    return dispatch.to(self, dtypes.int32)


def bool(self: Tensor) -> Tensor:
    return dispatch.to(self, dtypes.bool_)


def equal(self: Tensor, other: Tensor) -> builtins.bool:
    return dispatch.equal(self, other)


def eq_(self: Tensor, other: Any) -> Tensor:
    return dispatch.eq_(self, other)


def allclose(self: Tensor, other: Tensor, rtol: builtins.float = 1e-05,
             atol: builtins.float = 1e-08) -> builtins.bool:
    return dispatch.allclose(self, other, rtol, atol)


def permute(self: Tensor, *dims: Any) -> Tensor:
    return dispatch.permute(self, shape_args(dims))


def view(self: Tensor, *shape: Any) -> Tensor:
    return dispatch.view(self, shape_args(shape))


def reshape(self: Tensor, *shape: Any) -> Tensor:
    return dispatch.reshape(self, shape_args(shape))


def view_as(self: Tensor, other: Tensor) -> Tensor:
    return dispatch.view(self, tuple(other.shape))


def expand(self: Tensor, *sizes: Any) -> Tensor:
    return dispatch.expand(self, shape_args(sizes))


def __getitem__(self: Tensor, index: Any) -> Tensor:
    return dispatch.getitem(self, index)


def __setitem__(self: Tensor, index: Any, value: Any) -> None:
    dispatch.setitem(self, index, value)


# ---- Python operators -----------------------------------------------------------------
def __add__(self: Tensor, other: Any) -> Tensor:
    return dispatch.add(self, other)


def __radd__(self: Tensor, other: Any) -> Tensor:
    return dispatch.add(self, other)


def __sub__(self: Tensor, other: Any) -> Tensor:
    return dispatch.sub(self, other)


def __rsub__(self: Tensor, other: Any) -> Tensor:
    return dispatch.rsub(self, other)


def __mul__(self: Tensor, other: Any) -> Tensor:
    return dispatch.mul(self, other)


def __rmul__(self: Tensor, other: Any) -> Tensor:
    return dispatch.mul(self, other)


def __truediv__(self: Tensor, other: Any) -> Tensor:
    return dispatch.div(self, other)


def __rtruediv__(self: Tensor, other: Any) -> Tensor:
    # torch/_tensor.py's __rdiv__: self.reciprocal() * other (ReciprocalBackward0,
    # MulBackward0; a self that is no Tensor meets the AttributeError)
    return self.reciprocal() * other  # type: ignore[attr-defined]


__rdiv__ = __rtruediv__


def __pow__(self: Tensor, exponent: Any) -> Tensor:
    return dispatch.pow(self, exponent)


def __rpow__(self: Tensor, base: Any) -> Tensor:
    return dispatch.pow(base, self)


def __rmod__(self: Tensor, other: Any) -> Tensor:
    return dispatch.remainder(other, self)


def __neg__(self: Tensor) -> Tensor:
    return dispatch.neg(self)


def __abs__(self: Tensor) -> Tensor:
    return dispatch.abs(self)


def __iadd__(self: Tensor, other: Any) -> Tensor:
    return dispatch.add_(self, other, 1)


def __isub__(self: Tensor, other: Any) -> Tensor:
    return dispatch.sub_(self, other, 1)


def __imul__(self: Tensor, other: Any) -> Tensor:
    return dispatch.mul_(self, other)


def __itruediv__(self: Tensor, other: Any) -> Tensor:
    return dispatch.div_(self, other)


def __lt__(self: Tensor, other: Any) -> Tensor:
    return dispatch.compare(self, other, np.less)


def __le__(self: Tensor, other: Any) -> Tensor:
    return dispatch.compare(self, other, np.less_equal)


def __gt__(self: Tensor, other: Any) -> Tensor:
    return dispatch.compare(self, other, np.greater)


def __ge__(self: Tensor, other: Any) -> Tensor:
    return dispatch.compare(self, other, np.greater_equal)


def __eq__(self: Tensor, other: Any) -> Tensor:
    return dispatch.compare(self, other, np.equal)


def __ne__(self: Tensor, other: Any) -> Tensor:
    return dispatch.compare(self, other, np.not_equal)


def __invert__(self: Tensor) -> Tensor:
    return dispatch.logical_not(self)


def __and__(self: Tensor, other: Any) -> Tensor:
    return dispatch.compare(self, other, np.logical_and)


def __or__(self: Tensor, other: Any) -> Tensor:
    return dispatch.compare(self, other, np.logical_or)
