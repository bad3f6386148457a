"""The losses of torch.nn.functional (registry rows `nn.functional.<name>`).

A loss with a node of its own in torch (SoftMarginLossBackward0, HuberLossBackward0, ...) is
a `PointwiseLoss`: the elementwise loss in NumPy (float64, rounded once), reduced, recorded
with torch's node and saved tensors; its gradients are written in engine ops on the saved
values, so create_graph differentiates them again (the second-order grad_fn names are those
of the engine ops, not torch's `*BackwardBackward0`: the OpInfo check compares values and
which grads require grad there), except smooth_l1_loss's, huber_loss's and
soft_margin_loss's, whose backward ops are modelled with their nodes
(SmoothL1LossBackwardBackward0, ...). A loss torch writes
as a composition (l1_loss) is that composition.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor
from . import common
from . import nn as nn_ops
from . import unary_via_backward as ub  # abs, tanh, sigmoid, relu
from .basic import copying, reductions
from .basic import elementwise as ops

Array = np.ndarray
REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(messages.invalid_reduction(reduction))


def _warn_size(input: Tensor, target: Tensor) -> None:
    """F.*_loss's warning where the target's size differs (stacklevel: the caller of the
    registry's export, which wraps the forward)."""
    if target.size() != input.size():
        warnings.warn(messages.target_size_differs(target.size(), input.size()), UserWarning,
                      stacklevel=4)


def _reduce(t: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return reductions.mean(t)
    return reductions.sum(t) if reduction == "sum" else t


@dataclass(frozen=True)
class PointwiseLoss:
    """loss(self, target) elementwise, then reduced. `inputs`: the node's differentiable
    inputs (target is one where derivatives.yaml has a formula for it); `loss`: NumPy, on
    float64 values and the attributes' values; `grads`: each input's elementwise
    derivative, in engine ops on the saved self and target and the node (`c.beta`,
    `c.weight`); `weights`: the optional tensor arguments torch also saves (all saved in
    their names' sorted order, as torch's nodes save these)."""
    node: str
    inputs: tuple[str, ...]
    loss: Callable[..., Array]
    grads: tuple[Callable[[Tensor, Tensor, Any], Tensor], ...]
    weights: tuple[str, ...] = ()
    function: str = ""   # ATen's name, in the error refusing a weight that requires grad
    # ATen's kernel, compiled for floating dtypes only (huber_cpu): names it refusing others
    kernel: str = ""
    # the loss is written into empty_like(input) (soft_margin_loss_out, huber_loss): the
    # result has input's dtype, and a computed dtype that cannot be cast to it is refused
    into_input: bool = False
    # torch's differentiable `<loss>_backward` op (grad, self, target, node), where
    # derivatives.yaml's formulas call one (smooth_l1_loss, huber_loss, soft_margin_loss):
    # target's gradient (where it has one) is it with self and target swapped, and
    # create_graph records its node
    backward_op: Callable[[Tensor, Tensor, Tensor, Any], Tensor] | None = None
    # each input's gradient written whole, (grad, node) -> Tensor, where FunctionsManual's
    # formula is not `grad / numel * d` (binary_cross_entropy_with_logits_backward divides
    # the product by numel last): its create_graph nodes follow (`grads` stay the jvp's)
    manual: tuple[Callable[[Tensor, Any], Tensor], ...] = ()
    # a reduced loss in a storage of the unreduced loss's size (common.in_loss_storage)
    in_loss_storage: bool = False
    spec: OpSpec = field(init=False, repr=False)

    def __post_init__(self) -> None:
        saves = ("self", "target", *self.weights)
        object.__setattr__(self, "spec", OpSpec(
            self.node, self.inputs, dict.fromkeys(self.inputs, saves),
            self._backward, jvp=self._jvp))

    def _scaled(self, g: Tensor, c: Any) -> Tensor:
        return ops.div_scalar(g, c.numel) if c.reduction == "mean" else g

    def _backward(self, c: Any, g: Tensor) -> list[Tensor | None]:
        if (op := self.backward_op) is not None:
            formulas = (lambda: op(g, c.self, c.target, c), lambda: op(g, c.target, c.self, c))
            return c.grads(*formulas[:len(self.inputs)])
        if self.manual:
            return c.grads(*(lambda f=f: f(g, c) for f in self.manual))
        scaled = self._scaled(g, c)
        return c.grads(*(lambda d=d: ops.mul(scaled, d(c.self, c.target, c))
                         for d in self.grads))

    def _jvp(self, c: Any) -> Tensor:
        # the sum of each input's derivative times its tangent, then reduced
        terms = [ops.mul(d(c.self, c.target, c), getattr(c, f"{name}_t"))
                 for name, d in zip(self.inputs, self.grads, strict=True)]
        total = terms[0] if len(terms) == 1 else ops.add(terms[0], terms[1])
        return _reduce(total, c.reduction)

    def __call__(self, input: Tensor, target: Tensor, reduction: str, **attrs: Any) -> Tensor:
        _check_reduction(reduction)
        for name in self.weights:
            weight = attrs.get(name)
            if weight is not None and weight.requires_grad and is_grad_enabled():
                raise RuntimeError(messages.not_differentiable_argument(self.function, name))
        dt = common._promotes([input, target])
        if self.into_input:
            # soft_margin_loss_out's exp_ gives an integer's default float dtype
            computed = dt if self.kernel or dt.is_floating_point else dtypes.get_default_dtype()
            if not np.can_cast(computed.np, input.dtype.np, casting="same_kind"):
                raise RuntimeError(messages.cannot_cast(computed.scalar_name,
                                                        input.dtype.scalar_name))
        if self.kernel and not dt.is_floating_point:
            raise NotImplementedError(messages.kernel_not_implemented(self.kernel, dt.scalar_name))
        shape = common.broadcast_shape(tuple(input.shape), tuple(target.shape))
        values = {k: v._data.astype(np.float64) if isinstance(v, Tensor) else v
                  for k, v in attrs.items()}
        value = common._compute(lambda x, y: self.loss(x, y, **values),
                                input._data.astype(np.float64), target._data.astype(np.float64))
        value = np.broadcast_to(value, shape)
        if reduction == "mean":
            value = value.mean() if value.size else np.float64("nan")
        elif reduction == "sum":
            value = value.sum()
        out = common.new(value, input.dtype if self.into_input else dt, input.device)
        if self.in_loss_storage and reduction != "none":
            out = common.in_loss_storage(out, int(np.prod(shape)))
        inputs = [input, target][:len(self.inputs)]
        extra = {} if len(self.inputs) == 2 else {"target": target}
        return record(self.spec, out, inputs, reduction=reduction, numel=int(np.prod(shape)),
                      **attrs, **extra)


def _mask(x: Tensor, where: Callable[[Array], Array]) -> Tensor:
    return common.new(where(x._data), dtypes.bool_, x.device)


# ---- soft_margin_loss: log(1 + exp(-y x)); derivatives.yaml has no target formula -----
# Its gradient is soft_margin_loss_backward, an op of its own (Loss.cpp: -norm * target * z /
# (1 + z) * grad_output, z = exp(-target * input), norm 1 / numel for a mean), whose node
# SoftMarginLossBackwardBackward0 differentiates grad_output by
# soft_margin_loss_double_backward_grad_output (for "none" the op itself on grad, else
# (op(ones_like(grad_output)) * grad).sum()) and self by soft_margin_loss_double_backward
# (grad * grad_output * target^2 * z / (z + 1)^2, / numel for a mean; FunctionsManual.cpp);
# target has no formula.

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
    out = common._elementwise(None, kernel, (grad, x, y), out_dtype=x.dtype,
                              compute_dtype=dtypes.float64)
    return record(SOFT_MARGIN_BACKWARD, out, [grad, x], target=y, reduction=c.reduction,
                  numel=c.numel)


SOFT_MARGIN = PointwiseLoss(
    "SoftMarginLossBackward0", ("self",),
    lambda x, y: np.log1p(np.exp(-y * x)),
    (lambda x, y, a: ops.mul(ops.neg(y), ub.sigmoid(ops.neg(ops.mul(y, x)))),),
    into_input=True, backward_op=soft_margin_loss_backward, in_loss_storage=True)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    _check_reduction(reduction)
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
    out = common._elementwise(None, kernel, (grad, x, y), out_dtype=x.dtype,
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


def _broadcast(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """torch.broadcast_tensors(input, target), as F.l1_loss, mse_loss, smooth_l1_loss and
    huber_loss call it before the loss: a tensor of another shape than the broadcast one is
    expanded (ExpandBackward0 in the graph), one of that shape passes as it is."""
    shape = common.broadcast_shape(tuple(input.shape), tuple(target.shape))
    return (input if tuple(input.shape) == shape else input.expand(*shape),
            target if tuple(target.shape) == shape else target.expand(*shape))


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean") -> Tensor:
    """ATen's composition: (input - target).abs(), reduced."""
    _warn_size(input, target)
    _check_reduction(reduction)
    input, target = _broadcast(input, target)
    return _reduce(ub.abs(ops.sub(input, target)), reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None,
                   reduce: Any = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """F.smooth_l1_loss: l1_loss where beta is 0."""
    _warn_size(input, target)
    _check_reduction(reduction)
    input, target = _broadcast(input, target)
    if beta == 0.0:
        return _reduce(ub.abs(ops.sub(input, target)), reduction)
    return SMOOTH_L1(input, target, reduction, beta=beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    _warn_size(input, target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError(messages.HUBER_DELTA)
    input, target = _broadcast(input, target)
    return HUBER(input, target, reduction, delta=delta)


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    _warn_size(input, target)
    _check_reduction(reduction)
    input, target = _broadcast(input, target)
    dt = common._promotes([input, target])
    if not dt.is_floating_point:
        raise NotImplementedError(messages.kernel_not_implemented("mse_cpu", dt.scalar_name))
    return nn_ops.mse_loss(input, target, reduction)


# ---- softmin: softmax(-input) --------------------------------------------------------

def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: dtypes.dtype | None = None) -> Tensor:
    """(-input).softmax(dim, dtype): the negation cast to `dtype` first (ToCopyBackward0),
    as ATen's softmax with a dtype."""
    negated = ops.neg(input)
    if dtype is not None and dtype != negated.dtype:
        negated = copying.to(negated, dtype)
    return nn_ops.softmax(negated, dim if dim is not None else
                          (0 if input.ndim in (0, 1, 3) else 1))
