"""torch.nn.functional: the functions written here, and the registry's rows
`nn.functional.<name>` (their forwards in ops/), which the facade sets on this module."""

from __future__ import annotations

from ..ops import nn as nn_ops
from ..tensor import Tensor


def softmax(input: Tensor, dim: int) -> Tensor:
    return nn_ops.softmax(input, dim)


def log_softmax(input: Tensor, dim: int) -> Tensor:
    return nn_ops.log_softmax(input, dim)


def nll_loss(input: Tensor, target: Tensor, reduction: str = "mean",
             ignore_index: int = -100) -> Tensor:
    return nn_ops.nll_loss(input, target, reduction=reduction, ignore_index=ignore_index)


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean",
                  ignore_index: int = -100) -> Tensor:
    """Class-index targets: nll_loss(log_softmax(input, 1)), as ATen composes it."""
    dim = 0 if input.ndim == 1 else 1
    return nll_loss(log_softmax(input, dim), target, reduction, ignore_index)
