"""How torch.tensor stores each Python number of a list into the tensor's dtype:
torch/csrc/utils/python_scalars.h store_scalar, with python_numbers.h's unpackers.

A floating dtype takes the number through PyFloat_AsDouble, so a complex number is a
TypeError, even with no imaginary part, and a tensor goes through its __float__; an integer
dtype takes a float through c10's checked_convert (a value out of the dtype's range is an
overflow error, a fraction is cut) and anything else through __index__ (a complex number and
a float tensor are TypeErrors); bool takes any number by whether it is non-zero.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import dtypes, messages

# the type names unpackIntegral passes to checked_convert, by dtype
# (uint8's rule differs: c10 lets a negative integer wrap, -1 is 255)
_INTEGRAL_NAMES = {dtypes.uint8: "uint8", dtypes.int8: "int8", dtypes.int16: "int16",
                   dtypes.int32: "int32", dtypes.int64: "int64"}


def store_scalar(value: Any, dt: dtypes.dtype) -> Any:
    """`value`, one element of torch.tensor's data, as dtype `dt` stores it (a complex dtype
    takes it as it is)."""
    if dt.is_complex:
        return value
    if dt is dtypes.bool_:
        return _as_bool(value)
    if dt.is_floating_point:
        return _as_double(value)
    return _as_integral(value, dt)


def _as_double(value: Any) -> float:
    """THPUtils_unpackDouble: CPython's PyFloat_AsDouble."""
    if isinstance(value, float):
        return value
    if hasattr(type(value), "__float__"):   # NumPy's scalars (complex128 warns and keeps
        return float(value)                   # its real part), Python's int
    if hasattr(type(value), "__index__"):
        return float(operator.index(value))
    raise TypeError(messages.must_be_real_number(type(value).__name__))   # complex, None


def _as_integral(value: Any, dt: dtypes.dtype) -> int:
    """unpackIntegral: a float through checked_convert<T>(double), anything else through
    PyLong_AsLongLongAndOverflow (__index__), then checked_convert<T>(int64)."""
    info = np.iinfo(dt.np)
    name = _INTEGRAL_NAMES[dt]
    if isinstance(value, float):
        # c10::overflows<T>(double): an integer type has no inf or NaN to take
        if value != value or not info.min <= value <= info.max:
            raise RuntimeError(messages.value_overflow(name))
        return int(value)
    number = operator.index(value)
    if not -2 ** 63 <= number < 2 ** 63:
        raise ValueError(messages.UNPACK_LONG_OVERFLOW)
    if dt is dtypes.uint8:
        if not -255 <= number <= 255:
            raise RuntimeError(messages.value_overflow(name))
        return number % 256
    if not info.min <= number <= info.max:   # c10::overflows<T>(int64)
        raise RuntimeError(messages.value_overflow(name))
    return number


def _as_bool(value: Any) -> bool:
    """THPUtils_unpackNumberAsBool: a float or complex number by whether it is non-zero,
    anything else through __index__ (NumPy's bool as it is)."""
    if isinstance(value, float | complex | bool | np.bool_):
        return bool(value)
    return bool(operator.index(value))
