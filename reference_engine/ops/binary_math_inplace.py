"""The in-place forms of binary_math's ternary ops: lerp_, addcmul_, addcdiv_. Each is its
out-of-place op's node and formulas (derivatives.yaml has no separate entry: torch's codegen
derives the in-place op, its backward reading the original self where a formula reads self,
its forward formula `result` as self after the write)."""

from __future__ import annotations

from typing import Any

from ..grad_mode import no_grad
from ..tensor import Tensor
from . import binary_math as ops
from .basic.inplace import apply_inplace


def lerp_(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    with no_grad():
        r = ops.lerp(self, end, weight)
    if isinstance(weight, Tensor):
        return apply_inplace(self, ops.LERP, r, [end, weight])
    return apply_inplace(self, ops.LERP_SCALAR, r, [end], weight=weight)


def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    with no_grad():
        r = ops.addcmul(self, tensor1, tensor2, value=value)
    return apply_inplace(self, ops.ADDCMUL, r, [tensor1, tensor2], value=value)


def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    with no_grad():
        r = ops.addcdiv(self, tensor1, tensor2, value=value)
    return apply_inplace(self, ops.ADDCDIV, r, [tensor1, tensor2], value=value)
