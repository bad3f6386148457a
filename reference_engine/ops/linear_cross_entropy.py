"""F.linear_cross_entropy: torch's Python function on its reference path (`options=None`),
cross_entropy of linear(input, linear_weight, linear_bias), the logits reshaped to
(*batch, classes, *out_features) for a K-dimensional weight, so its graph is those ops'
(NllLossBackward0 over LogSoftmaxBackward0 over the reshape and linear's nodes).

The chunked path (`options` a LinearCrossEntropyOptions) is a torch.library custom op that
computes the grads inside its forward (GeneratedBackwardFor_..._chunked_defaultBackward):
not modelled, refused with NotImplementedError."""

from __future__ import annotations

import math
from typing import Any

from .. import messages
from ..tensor import Tensor
from .basic import views
from .layers import linear
from .nll import IGNORE_INDEX, cross_entropy


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """torch/nn/functional.py linear_cross_entropy: its checks in its order, then the
    reference implementation."""
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(messages.linear_cross_entropy_input_dims(input.ndim))
    if linear_weight.ndim < 2:
        raise RuntimeError(messages.linear_cross_entropy_weight_dims(linear_weight.ndim))
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(messages.linear_cross_entropy_in_features(
            in_features, linear_weight.shape[-1]))
    classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(messages.linear_cross_entropy_bias_shape(
            (classes, *out_features), tuple(linear_bias.shape)))
    if out_features and not batches:
        raise RuntimeError(messages.linear_cross_entropy_unbatched(
            tuple(linear_weight.shape), in_features, tuple(input.shape)))
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError(messages.LINEAR_CROSS_ENTROPY_PROB_IGNORE)
    if options is not None:
        raise NotImplementedError(messages.LINEAR_CROSS_ENTROPY_CHUNKED)
    if out_features:
        width = math.prod(out_features, start=classes)
        linear_weight = views.reshape(linear_weight, (width, in_features))
        if linear_bias is not None:
            linear_bias = views.reshape(linear_bias, (width,))
    logits = views.reshape(linear(input, linear_weight, linear_bias), logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=IGNORE_INDEX if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
