"""The losses of torch.nn.functional whose gradient is a backward op of its own, modelled
with its node: soft_margin_loss (soft_margin_loss_backward), smooth_l1_loss and huber_loss
(smooth_l1_loss_backward, huber_loss_backward), each a `PointwiseLoss` (losses.py) whose
backward_op records SoftMarginLossBackwardBackward0, SmoothL1LossBackwardBackward0 or
HuberLossBackwardBackward0, so that create_graph differentiates it as torch does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common
from . import unary_via_backward as ub  # abs, tanh, sigmoid, relu
from .basic import elementwise as ops
from .basic import reductions
from .losses import Array, PointwiseLoss, broadcast_pair, check_reduction, reduce_loss, warn_size

# ---- soft_margin_loss: log(1 + exp(-y x)); derivatives.yaml has no target formula -----
# Its gradient is soft_margin_loss_backward, an op of its own (Loss.cpp: -norm * target * z /
# (1 + z) * grad_output, z = exp(-target * input), norm 1 / numel for a mean), whose node
# SoftMarginLossBackwardBackward0 differentiates grad_output by
# soft_margin_loss_double_backward_grad_output (for "none" the op itself on grad, else
# (op(ones_like(grad_output)) * grad).sum()) and self by soft_margin_loss_double_backward
# (grad * grad_output * target^2 * z / (z + 1)^2, / numel for a mean; FunctionsManual.cpp);
# target has no formula. The jvp (`result:`) calls soft_margin_loss_backward with `target`
# itself, not target_p: a dual target makes it refuse (it has no forward formula), while
# a dual target of a plain self gives no tangent (the formula runs for self_t alone).

def _soft_margin_double(gg: Tensor, x: Tensor, y: Tensor, c: Any) -> Tensor:
    z = ops.exp(ops.mul(x, ops.neg(y)))
    zplus1 = ops.add_scalar(z, 1)
    return _per_mean(ops.div(ops.mul(ops.mul(gg, ops.mul(y, y)), z), ops.mul(zplus1, zplus1)),
                     c)


def _soft_margin_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    return c.grads(lambda: _double_grad_output(soft_margin_loss_backward, g, c),
                   lambda: _soft_margin_double(ops.mul(g, c.grad_output), c.self, c.target, c))


SOFT_MARGIN_BACKWARD = OpSpec(
    "SoftMarginLossBackwardBackward0", ("grad_output", "self"),
    {"grad_output": ("self", "target"), "self": ("grad_output", "self", "target")},
    _soft_margin_backward)


def soft_margin_loss_backward(grad: Tensor, x: Tensor, y: Tensor, c: Any) -> Tensor:
    norm = _norm(c)

    def kernel(go: Array, a: Array, b: Array) -> Array:
        z = np.exp(-b * a)
        return -norm * b * z / (1 + z) * go
    out = common.elementwise_op(None, kernel, (grad, x, y), out_dtype=x.dtype,
                                compute_dtype=dtypes.float64)
    return record(SOFT_MARGIN_BACKWARD, out, [grad, x], target=y, reduction=c.reduction,
                  numel=c.numel)


SOFT_MARGIN = PointwiseLoss(
    "SoftMarginLossBackward0", ("self",),
    lambda x, y: np.log1p(np.exp(-y * x)),
    (lambda x, y, a: ops.mul(ops.neg(y), ub.sigmoid(ops.neg(ops.mul(y, x)))),),
    into_input=True, backward_op=soft_margin_loss_backward, in_loss_storage=True,
    jvp_whole=(("target", "soft_margin_loss_backward"),))


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    check_reduction(reduction)
    # ATen's soft_margin_loss writes into an output of the input's shape (at::neg_out ...)
    shape = common.broadcast_shape(tuple(input.shape), tuple(target.shape))   # torch's text
    if shape != tuple(input.shape):
        raise RuntimeError(messages.output_broadcast(tuple(input.shape), shape))
    return SOFT_MARGIN(input, target, reduction)


# ---- smooth_l1_loss and huber_loss: quadratic inside, linear outside -------------------

def _smooth_l1(x: Array, y: Array, beta: float) -> Array:
    d = np.abs(x - y)
    return np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)


def _piecewise_dx(x: Tensor, y: Tensor, width: float, slope: float, outside: float
                  ) -> Tensor:
    """slope * d inside |d| < width, outside * sign(d) beyond (d = x - y), written as
    d * (slope or 0) + (0 or outside * sign(d)) with constant factors: its own derivative is
    then grad * mask * slope, a product as torch's *_double_backward (-0 for a negative grad
    outside, where a select would give +0)."""
    d = ops.sub(x, y)
    inside = np.abs(d._data) < width
    factor = common.new(np.where(inside, slope, 0.0), d.dtype, d.device)
    rest = common.new(np.where(inside, 0.0, outside * np.sign(d._data)), d.dtype, d.device)
    return ops.add(ops.mul(d, factor), rest)


def _smooth_l1_dx(x: Tensor, y: Tensor, c: Any) -> Tensor:
    return _piecewise_dx(x, y, c.beta, 1 / c.beta, 1.0)


def _huber(x: Array, y: Array, delta: float) -> Array:
    d = np.abs(x - y)
    return np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))


def _huber_dx(x: Tensor, y: Tensor, c: Any) -> Tensor:
    return _piecewise_dx(x, y, c.delta, 1.0, c.delta)


# ---- smooth_l1_loss_backward and huber_loss_backward: ops of their own ------------------
# Their kernels (smooth_l1_backward_cpu_kernel, huber_backward_cpu_kernel) on x = self -
# target: -norm * grad (times delta) for x <= -width, norm * grad (times delta) for x >=
# width, norm * x * grad (/ beta) between; norm is 1 / numel for a mean. derivatives.yaml
# differentiates them again: grad_output by the op itself (huber: by
# huber_loss_double_backward_grad_output), self by <loss>_double_backward(grad *
# grad_output, ...) = grad * grad_output * (|x| < width) (/ beta) (/ numel for a mean),
# target by its negation.

def _norm(c: Any) -> float:
    return 1 / c.numel if c.reduction == "mean" else 1.0


def _inside(gg: Tensor, x: Tensor, y: Tensor, width: float) -> Tensor:
    """gg * (|x - y| < width): the double backward's mask, a constant (the comparison ends
    the history of torch's (input - target).abs())."""
    d = np.abs(x._data.astype(np.float64) - y._data.astype(np.float64))
    return ops.mul(gg, common.new(d < width, dtypes.bool_, gg.device))


def _per_mean(t: Tensor, c: Any) -> Tensor:
    """The double backwards' `grad_input /= input.sym_numel()` for a mean: in place, so the
    grad they return is at version 1."""
    if c.reduction != "mean":
        return t
    return common.written_in_place(ops.div_scalar(t, c.numel))


def _smooth_l1_double(gg: Tensor, x: Tensor, y: Tensor, c: Any) -> Tensor:
    if c.beta == 0:
        return common.zeros_like(gg)
    inside = common.new(np.abs(x._data.astype(np.float64) - y._data.astype(np.float64))
                        < c.beta, gg.dtype, gg.device)   # (d < beta).type_as(grad)
    return _per_mean(ops.div_scalar(ops.mul(gg, inside), c.beta), c)


def _huber_double(gg: Tensor, x: Tensor, y: Tensor, c: Any) -> Tensor:
    return _per_mean(_inside(gg, x, y, c.delta), c)


def _double_grad_output(backward: Callable[[Tensor, Tensor, Tensor, Any], Tensor], g: Tensor,
                        c: Any) -> Tensor:
    """<loss>_double_backward_grad_output: for "none" the backward op on grad, else
    (backward(ones_like(grad_output)) * grad).sum() (huber_loss, soft_margin_loss)."""
    if c.reduction == "none":
        return backward(g, c.self, c.target, c)
    go = c.grad_output
    r = backward(common.new(np.ones(go.shape), go.dtype, go.device), c.self, c.target, c)
    return reductions.sum(ops.mul(r, g))


def _huber_double_grad_output(g: Tensor, c: Any) -> Tensor:
    return _double_grad_output(huber_loss_backward, g, c)


def _loss_backward_spec(node: str, double: Callable[[Tensor, Tensor, Tensor, Any], Tensor],
                        grad_output: Callable[[Tensor, Any], Tensor]) -> OpSpec:
    every = ("grad_output", "self", "target")
    return OpSpec(
        node, every, {"grad_output": ("self", "target"), "self": every, "target": every},
        lambda c, g: c.grads(
            lambda: grad_output(g, c),
            lambda: double(ops.mul(g, c.grad_output), c.self, c.target, c),
            lambda: ops.neg(double(ops.mul(g, c.grad_output), c.self, c.target, c))))


SMOOTH_L1_BACKWARD = _loss_backward_spec(
    "SmoothL1LossBackwardBackward0", _smooth_l1_double,
    lambda g, c: smooth_l1_loss_backward(g, c.self, c.target, c))
HUBER_BACKWARD = _loss_backward_spec("HuberLossBackwardBackward0", _huber_double,
                                     _huber_double_grad_output)


def _loss_backward(spec: OpSpec, grad: Tensor, x: Tensor, y: Tensor, c: Any, width: float,
                   scale: float, divide: bool, **width_attr: float) -> Tensor:
    norm = _norm(c)

    def kernel(go: Array, a: Array, b: Array) -> Array:
        d = a - b
        inner = norm * d * go / width if divide else norm * d * go
        return np.where(d <= -width, -norm * go * scale,
                        np.where(d >= width, norm * go * scale, inner))
    out = common.elementwise_op(None, kernel, (grad, x, y), out_dtype=x.dtype,
                                compute_dtype=dtypes.float64)
    return record(spec, out, [grad, x, y], reduction=c.reduction, numel=c.numel,
                  **width_attr)


def smooth_l1_loss_backward(grad: Tensor, x: Tensor, y: Tensor, c: Any) -> Tensor:
    return _loss_backward(SMOOTH_L1_BACKWARD, grad, x, y, c, c.beta, 1.0, True, beta=c.beta)


def huber_loss_backward(grad: Tensor, x: Tensor, y: Tensor, c: Any) -> Tensor:
    return _loss_backward(HUBER_BACKWARD, grad, x, y, c, c.delta, c.delta, False,
                          delta=c.delta)


SMOOTH_L1 = PointwiseLoss("SmoothL1LossBackward0", ("self", "target"), _smooth_l1,
                          (_smooth_l1_dx, lambda x, y, a: ops.neg(_smooth_l1_dx(x, y, a))),
                          kernel="smooth_l1_cpu", backward_op=smooth_l1_loss_backward,
                          in_loss_storage=True)
HUBER = PointwiseLoss("HuberLossBackward0", ("self", "target"), _huber,
                      (_huber_dx, lambda x, y, a: ops.neg(_huber_dx(x, y, a))),
                      kernel="huber_cpu", into_input=True, backward_op=huber_loss_backward)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None,
                   reduce: Any = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """F.smooth_l1_loss: l1_loss where beta is 0."""
    warn_size(input, target)
    check_reduction(reduction)
    input, target = broadcast_pair(input, target)
    if beta == 0.0:
        return reduce_loss(ub.abs(ops.sub(input, target)), reduction)
    return SMOOTH_L1(input, target, reduction, beta=beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    warn_size(input, target)
    check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError(messages.HUBER_DELTA)
    input, target = broadcast_pair(input, target)
    return HUBER(input, target, reduction, delta=delta)
