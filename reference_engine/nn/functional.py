"""torch.nn.functional: the functions written here, and the registry's rows
`nn.functional.<name>` (their forwards in ops/), which the facade sets on this module."""

from __future__ import annotations

from ..ops import nn as nn_ops
from ..tensor import Tensor


def softmax(input: Tensor, dim: int) -> Tensor:
    return nn_ops.softmax(input, dim)


def log_softmax(input: Tensor, dim: int) -> Tensor:
    return nn_ops.log_softmax(input, dim)
