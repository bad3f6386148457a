"""The losses of torch.nn.functional (registry rows `nn.functional.<name>`).

A loss with a node of its own in torch (SoftMarginLossBackward0, HuberLossBackward0, ...) is
a `PointwiseLoss`: the elementwise loss in NumPy (float64, rounded once), reduced, recorded
with torch's node and saved tensors; its gradients are written in engine ops on the saved
values, so create_graph differentiates them again (the second-order grad_fn names are those
of the engine ops, not torch's `*BackwardBackward0`: the OpInfo check compares values and
which grads require grad there), except smooth_l1_loss's, huber_loss's and
soft_margin_loss's, whose backward ops are modelled with their nodes
(SmoothL1LossBackwardBackward0, ...: losses_with_backward_ops.py). A loss torch writes
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
from . import common, moments
from . import nn as nn_ops
from . import unary_via_backward as ub  # abs, tanh, sigmoid, relu
from .basic import elementwise as ops
from .basic import reductions, to_copy

Array = np.ndarray
REDUCTIONS = ("none", "mean", "sum")


def check_reduction(reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(messages.invalid_reduction(reduction))


def warn_size(input: Tensor, target: Tensor) -> None:
    """F.*_loss's warning where the target's size differs (stacklevel: the caller of the
    registry's export, which wraps the forward)."""
    if target.size() != input.size():
        warnings.warn(messages.target_size_differs(target.size(), input.size()), UserWarning,
                      stacklevel=4)


def reduce_loss(t: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return moments.mean(t)
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
    # OpSpec.jvp_whole (soft_margin_loss's formula reads `target`, not `target_p`)
    jvp_whole: tuple[tuple[str, str], ...] = ()
    spec: OpSpec = field(init=False, repr=False)

    def __post_init__(self) -> None:
        saves = ("self", "target", *self.weights)
        object.__setattr__(self, "spec", OpSpec(
            self.node, self.inputs, dict.fromkeys(self.inputs, saves),
            self._backward, jvp=self._jvp, jvp_whole=self.jvp_whole))

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
        return reduce_loss(total, c.reduction)

    def __call__(self, input: Tensor, target: Tensor, reduction: str, **attrs: Any) -> Tensor:
        check_reduction(reduction)
        for name in self.weights:
            weight = attrs.get(name)
            if weight is not None and weight.requires_grad and is_grad_enabled():
                raise RuntimeError(messages.not_differentiable_argument(self.function, name))
        dt = common.result_dtype([input, target])
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
        value = common.compute_on(lambda x, y: self.loss(x, y, **values),
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


def broadcast_pair(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """torch.broadcast_tensors(input, target), as F.l1_loss, mse_loss, smooth_l1_loss and
    huber_loss call it before the loss: a tensor of another shape than the broadcast one is
    expanded (ExpandBackward0 in the graph), one of that shape passes as it is."""
    shape = common.broadcast_shape(tuple(input.shape), tuple(target.shape))
    return (input if tuple(input.shape) == shape else input.expand(*shape),
            target if tuple(target.shape) == shape else target.expand(*shape))


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean") -> Tensor:
    """ATen's composition: (input - target).abs(), reduced."""
    warn_size(input, target)
    check_reduction(reduction)
    input, target = broadcast_pair(input, target)
    return reduce_loss(ub.abs(ops.sub(input, target)), reduction)


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    warn_size(input, target)
    check_reduction(reduction)
    input, target = broadcast_pair(input, target)
    dt = common.result_dtype([input, target])
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
        negated = to_copy.to(negated, dtype)
    return nn_ops.softmax(negated, dim if dim is not None else
                          (0 if input.ndim in (0, 1, 3) else 1))
