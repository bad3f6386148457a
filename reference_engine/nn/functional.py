"""torch.nn.functional: the functions written here, and the registry's rows
`nn.functional.<name>` (their forwards in ops/), which the facade sets on this module."""

from __future__ import annotations

import warnings

from .. import inplace, messages, views
from ..ops import linalg
from ..ops import nn as nn_ops
from ..tensor import Tensor


def softmax(input: Tensor, dim: int) -> Tensor:
    return nn_ops.softmax(input, dim)


def log_softmax(input: Tensor, dim: int) -> Tensor:
    return nn_ops.log_softmax(input, dim)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    if target.size() != input.size():
        warnings.warn(messages.target_size_differs(target.size(), input.size()), UserWarning,
                      stacklevel=2)
    return nn_ops.mse_loss(input, target, reduction)


def nll_loss(input: Tensor, target: Tensor, reduction: str = "mean",
             ignore_index: int = -100) -> Tensor:
    return nn_ops.nll_loss(input, target, reduction=reduction, ignore_index=ignore_index)


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean",
                  ignore_index: int = -100) -> Tensor:
    """Class-index targets: nll_loss(log_softmax(input, 1)), as ATen composes it."""
    dim = 0 if input.ndim == 1 else 1
    return nll_loss(log_softmax(input, dim), target, reduction, ignore_index)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """As ATen: addmm for a 2-D input with bias; other contiguous inputs with bias are
    flattened to 2-D, addmm'd and viewed back; without bias, matmul."""
    if input.ndim == 2 and bias is not None:
        return linalg.addmm(bias, input, views.t(weight))
    if bias is not None and input.is_contiguous():
        flat = views.reshape(input, (-1, input.shape[-1]))
        out = linalg.addmm(bias, flat, views.t(weight))
        return views.view(out, (*input.shape[:-1], weight.shape[0]))
    out = linalg.matmul(input, views.t(weight))
    return out if bias is None else inplace.add_(out, bias)
