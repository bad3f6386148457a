"""Tensor.double() and Tensor.float() (issue 24): `to` with the dtype, ToCopyBackward0, or
self itself when it already has it. A module of their own: their names are builtins'."""

from __future__ import annotations

from .. import dtypes
from ..tensor import Tensor
from .basic.to_copy import to


def double(self: Tensor, memory_format: dtypes.memory_format = dtypes.preserve_format
           ) -> Tensor:
    return to(self, dtypes.float64, memory_format=memory_format)


def float(self: Tensor, memory_format: dtypes.memory_format = dtypes.preserve_format
          ) -> Tensor:
    return to(self, dtypes.float32, memory_format=memory_format)
