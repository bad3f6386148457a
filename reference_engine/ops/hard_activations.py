"""nn.functional.hardsigmoid: an activations.Pointwise (see activations.py), its backward
hardsigmoid_backward (grad / 6 strictly inside (-3, 3), a selected 0 elsewhere)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import common
from .activations import Pointwise, check_no_inplace

HARDSIGMOID = Pointwise("HardsigmoidBackward0", "HardsigmoidBackwardBackward0", (),
                        lambda x: np.minimum(np.maximum(x + 3, 0), 6) / 6,
                        lambda x: np.where((x > -3) & (x < 3), 1 / 6, 0.0), None,
                        selects=True)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    common.floating_kernel("hardsigmoid_cpu", input)
    check_no_inplace("hardsigmoid", inplace)
    return HARDSIGMOID(input)
