"""F.feature_alpha_dropout: ATen's _dropout_impl (Dropout.cpp) with feature and alpha noise,
written in the same engine ops so that its graph names torch's nodes.

Not training, p = 0 or an empty input: the input itself (no node). p = 1: input * zeros(())
(MulBackward0). Otherwise a Bernoulli(1 - p) mask per (batch, channel), drawn from the
engine's generator (factories.rand: not torch's stream, so its values differ from torch's
whatever the seed), and input * (a * mask) + b, where b = (mask - 1) * alpha * a + alpha * a *
p: MulBackward0 then AddBackward0 (add_ in place on the product), as torch's.

Here in the library layer, not in ops/: the mask is a draw of the engine's generator
(factories), a layer above the ops."""

from __future__ import annotations

import math

from .. import messages
from ..factories import rand
from ..grad_mode import no_grad
from ..ops import common, inplace_ops
from ..ops.basic import elementwise as ops
from ..tensor import Tensor

ALPHA = 1.7580993408473766   # Dropout.cpp's: SELU's negative saturation, -scale * alpha


def _feature_noise(input: Tensor, p: float) -> Tensor:
    """make_feature_noise's shape (N, C, 1, ...) filled with Bernoulli(1 - p) draws."""
    if input.ndim < 2:
        raise RuntimeError(messages.FEATURE_DROPOUT_DIMS)
    shape = (input.shape[0], input.shape[1]) + (1,) * (input.ndim - 2)
    with no_grad():
        kept = rand(*shape, dtype=input.dtype)._data < 1 - p
    # new_empty(...).bernoulli_(1 - p): written once in place, as the saved noise's version shows
    return common.written_in_place(common.new(kept.astype(float), input.dtype, input.device))


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(messages.dropout_probability(p))
    if p == 0 or not training or input.numel() == 0:
        return input
    mul = inplace_ops.mul_ if inplace else ops.mul
    if p == 1:
        # at::zeros({}) is empty().zero_(): mul saves it at version 1
        return mul(input, common.written_in_place(common.zeros_scalar(input)))
    noise = _feature_noise(input, p)
    a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    with no_grad():   # the noise is a constant of the graph: built out of it, as ATen's
        b = inplace_ops.add_(inplace_ops.mul_(ops.add(noise, -1), ALPHA * a), ALPHA * a * p)
        inplace_ops.mul_(noise, a)
    return inplace_ops.add_(mul(input, noise), b)
