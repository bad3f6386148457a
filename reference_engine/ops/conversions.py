"""Tensor.double() and Tensor.float() (issue 24): `to` with the dtype, ToCopyBackward0, or
self itself when it already has it. A module of their own: their names are builtins'."""

from __future__ import annotations

from .. import dtypes
from ..tensor import Tensor
from .elementwise import to


def double(self: Tensor) -> Tensor:
    return to(self, dtypes.float64)


def float(self: Tensor) -> Tensor:
    return to(self, dtypes.float32)
