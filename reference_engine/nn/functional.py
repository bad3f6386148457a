"""torch.nn.functional: the few functions the harness uses."""

from __future__ import annotations

from .. import ops, views
from ..tensor import Tensor


def relu(input: Tensor) -> Tensor:
    return ops.relu(input)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return ops.mse_loss(input, target, reduction)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """As ATen: addmm when there is a bias, otherwise matmul (then add_ for >2-D inputs)."""
    if input.ndim == 2 and bias is not None:
        return ops.addmm(bias, input, views.t(weight))
    if input.ndim == 1 and bias is not None:   # torch: addmm on a 1-row view, viewed back
        row = ops.addmm(bias, views.unsqueeze(input, 0), views.t(weight))
        return views.view(row, (weight.shape[0],))
    out = ops.matmul(input, views.t(weight))
    return out if bias is None else out.add_(bias)
