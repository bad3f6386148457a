"""torch.nn.functional's binary cross entropy, on probabilities and on logits: each a
PointwiseLoss (losses.py), its gradients written in engine ops on the saved values."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import messages
from ..tensor import Tensor
from . import activations, common, piecewise
from . import unary_via_backward as ub  # abs, tanh, sigmoid, relu
from .basic import elementwise as ops
from .losses import Array, PointwiseLoss, check_reduction


def _bce(x: Array, y: Array, weight: Array | None) -> Array:
    # torch clamps each log at -100, so that 0 * log(0) is 0 and the loss finite
    loss = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log1p(-x), -100))
    return loss if weight is None else loss * weight


def _weighted(t: Tensor, weight: Tensor | None) -> Tensor:
    return t if weight is None else ops.mul(t, weight)


def _bce_dx(x: Tensor, y: Tensor, a: Any) -> Tensor:
    """binary_cross_entropy_backward: (x - y) / max((1 - x) x, EPSILON=1e-12), weighted."""
    denominator = piecewise.clamp(ops.mul(ops.rsub(x, 1), x), min=1e-12)
    return _weighted(ops.div(ops.sub(x, y), denominator), a.weight)


def _bce_dy(x: Tensor, y: Tensor, a: Any) -> Tensor:
    """binary_cross_entropy_target_backward: log(1 - x) - log(x), weighted."""
    return _weighted(ops.sub(ops.log(ops.rsub(x, 1)), ops.log(x)), a.weight)


BCE = PointwiseLoss("BinaryCrossEntropyBackward0", ("self", "target"), _bce,
                    (_bce_dx, _bce_dy), ("weight",), "binary_cross_entropy",
                    in_loss_storage=True)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    check_reduction(reduction)
    if target.size() != input.size():
        raise ValueError(messages.bce_target_size(target.size(), input.size()))
    if weight is not None:   # F.binary_cross_entropy expands it to the target's size
        weight = weight.expand(*common.broadcast_shape(tuple(target.shape), tuple(weight.shape)))
    return BCE(input, target, reduction, weight=weight)


def _bce_logits(x: Array, y: Array, weight: Array | None, pos_weight: Array | None) -> Array:
    softplus_neg = np.logaddexp(0, -x)   # log(1 + exp(-x)), stable
    log_weight = 1 if pos_weight is None else 1 + (pos_weight - 1) * y
    loss = (1 - y) * x + log_weight * softplus_neg
    return loss if weight is None else loss * weight


def _bce_logits_dx(x: Tensor, y: Tensor, a: Any) -> Tensor:
    pw = a.pos_weight
    if pw is None:   # sigmoid(x) - y
        return _weighted(ops.sub(ub.sigmoid(x), y), a.weight)
    # (1 - y) - (1 + (pw - 1) y) sigmoid(-x)
    log_weight = ops.add(ops.mul(ops.sub(pw, 1), y), 1)
    return _weighted(ops.sub(ops.rsub(y, 1), ops.mul(log_weight, ub.sigmoid(ops.neg(x)))),
                     a.weight)


def _bce_logits_dy(x: Tensor, y: Tensor, a: Any) -> Tensor:
    pw = a.pos_weight
    if pw is None:   # -x
        return _weighted(ops.neg(x), a.weight)
    # -x + (pw - 1) softplus(-x)
    return _weighted(ops.add(ops.neg(x), ops.mul(ops.sub(pw, 1), activations.softplus(
        ops.neg(x)))), a.weight)


def _mean(t: Tensor, c: Any) -> Tensor:
    """`grad_input.div_(input.sym_numel())` for reduction mean: last, a DivBackward1."""
    return ops.div_scalar(t, c.numel) if c.reduction == "mean" else t


def _bce_logits_backward(g: Tensor, c: Any) -> Tensor:
    """FunctionsManual's binary_cross_entropy_with_logits_backward, its GradMode branch (the
    in-place one computes the same values): (sigmoid(x) - y), or with pos_weight
    (pw y + 1 - y) sigmoid(x) - pw y, times grad, times weight, divided by numel last."""
    x, y, pw = c.self, c.target, c.pos_weight
    if pw is None:
        d = ops.sub(ub.sigmoid(x), y)
    else:   # pos_weight may broadcast: t = pos_weight.mul(target), not in place
        t = ops.mul(pw, y)
        d = ops.sub(ops.mul(ops.sub(ops.add_scalar(t, 1), y), ub.sigmoid(x)), t)
    return _mean(_weighted(ops.mul(d, g), c.weight), c)


def _bce_logits_target_backward(g: Tensor, c: Any) -> Tensor:
    """FunctionsManual's binary_cross_entropy_with_logits_target_backward: -x * grad, or
    with pos_weight (log_sigmoid(-x) - log_sigmoid(x) pw) * grad; times weight, divided
    by numel last."""
    x, pw = c.self, c.pos_weight
    if pw is None:
        d = ops.mul(ops.neg(x), g)
    else:
        d = ops.mul(ops.sub(activations.logsigmoid(ops.neg(x)),
                            ops.mul(activations.logsigmoid(x), pw)), g)
    return _mean(_weighted(d, c.weight), c)


BCE_LOGITS = PointwiseLoss("BinaryCrossEntropyWithLogitsBackward0", ("self", "target"),
                           _bce_logits, (_bce_logits_dx, _bce_logits_dy),
                           ("weight", "pos_weight"), "binary_cross_entropy_with_logits",
                           manual=(_bce_logits_backward, _bce_logits_target_backward))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    check_reduction(reduction)
    if target.size() != input.size():
        raise ValueError(messages.bce_logits_target_size(target.size(), input.size()))
    return BCE_LOGITS(input, target, reduction, weight=weight, pos_weight=pos_weight)
