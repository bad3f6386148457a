"""The activations of torch.nn.functional (registry rows `nn.functional.<name>`).

Each forward takes torch's parameters (`inplace=True` writes the input, as F.relu_ does).
"""

from __future__ import annotations

from .. import inplace as inplace_ops
from ..tensor import Tensor
from . import elementwise as ops


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """F.relu: torch.relu, or relu_ in place (both ReluBackward0)."""
    return inplace_ops.relu_(input) if inplace else ops.relu(input)
