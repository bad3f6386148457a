"""F.prelu: ATen's prelu composite (its checks, the weight reshaped to broadcast over dim 1)
over _prelu_kernel, whose backward op _prelu_kernel_backward gives both grads at once, so a
create_graph grad's node is torch's PreluKernelBackwardBackward0. Formulas:
derivatives.yaml's _prelu_kernel and _prelu_kernel_backward entries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, forward_ad, messages
from ..autograd_meta import OpSpec, differentiable, record, record_multi_input
from ..tensor import Tensor
from . import common
from .basic import elementwise as ops
from .basic import reductions, views
from .basic.comparisons import where


def _nonneg(t: Tensor) -> Tensor:
    """self >= 0, as derivatives.yaml's formulas test it."""
    return common.new(t._data >= 0, dtypes.bool_, t.device)


def _zero(t: Tensor) -> Tensor:
    return common.new(np.zeros(()), t.dtype, t.device)


def _kernel_jvp(c: Any) -> Tensor:
    """where(self >= 0, self_t, weight * self_t + weight_t * self)."""
    return where(_nonneg(c.self), c.self_t,
                 ops.add(ops.mul(c.weight, c.self_t), ops.mul(c.weight_t, c.self)))


def _kernel_grads(c: Any, g: Tensor) -> list[Tensor | None]:
    """_prelu_kernel_backward's grads; the weight's, of the input's shape, summed to the
    weight's as torch's engine sums a grad to its input's shape (SumBackward1, a view)."""
    gs, gw = prelu_kernel_backward(g, c.self, c.weight)
    return [gs, reductions.sum_to(gw, tuple(c.weight.shape))]


PRELU_KERNEL = OpSpec(
    "PreluKernelBackward0", ("self", "weight"),
    {"self": ("self", "weight"), "weight": ("self", "weight")},
    lambda c, g: _kernel_grads(c, g),
    jvp=_kernel_jvp)


def _kernel_backward_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """_prelu_kernel_backward's entry: grads[0] and grads[1] are the grads of its two
    outputs (grad_self, grad_weight)."""
    g0, g1 = gs
    if g0 is None and g1 is None:
        return [None, None, None]
    x, w, go = c.self, c.weight, c.grad_output
    pos = _nonneg(x)

    def grad_grad_output() -> Tensor:
        if g0 is not None:
            other = ops.mul(g0, w) if g1 is None else ops.add(ops.mul(g0, w), ops.mul(g1, x))
            return where(pos, g0, other)
        assert g1 is not None
        return where(pos, _zero(go), ops.mul(g1, x))

    return c.grads(
        grad_grad_output,
        lambda: common.zeros_like(x) if g1 is None else where(pos, _zero(x),
                                                              ops.mul(g1, go)),
        lambda: common.zeros_like(x) if g0 is None else reductions.sum_to(
            where(pos, _zero(w), ops.mul(g0, go)), tuple(w.shape)))


PRELU_KERNEL_BACKWARD = OpSpec(
    "PreluKernelBackwardBackward0", ("grad_output", "self", "weight"),
    dict.fromkeys(("grad_output", "self", "weight"), ("grad_output", "self", "weight")),
    _kernel_backward_backward)  # type: ignore[arg-type]


def _backward_jvps(c: Any) -> tuple[Tensor, Tensor]:
    """result0 and result1 of the _prelu_kernel_backward entry."""
    pos = _nonneg(c.self)
    r0 = where(pos, c.grad_output_t, ops.add(ops.mul(c.grad_output_t, c.weight),
                                             ops.mul(c.grad_output, c.weight_t)))
    r1 = where(pos, _zero(c.self), ops.add(ops.mul(c.grad_output, c.self_t),
                                           ops.mul(c.grad_output_t, c.self)))
    return r0, r1


def _backward_jvp_spec(index: int) -> OpSpec:
    return OpSpec("PreluKernelBackwardBackward0", ("grad_output", "self", "weight"),
                  jvp=lambda c: _backward_jvps(c)[index])


BACKWARD_JVPS = (_backward_jvp_spec(0), _backward_jvp_spec(1))


def prelu_kernel_backward(grad_output: Tensor, self: Tensor, weight: Tensor
                          ) -> tuple[Tensor, Tensor]:
    """(grad_self, grad_weight), both of self's shape: the CPU kernel's
    `self > 0 ? grad : weight * grad` and `self > 0 ? 0 : self * grad`. Both are outputs of
    one TensorIterator over (self, weight, grad_output), so they are laid out as its operands
    order them (a transposed self gives transposed grads)."""
    x, w, g = self._data, weight._data, grad_output._data
    pos = x > 0
    with np.errstate(all="ignore"):
        gs = np.where(pos, g, w * g).astype(x.dtype)
        gw = np.where(pos, 0, x * g).astype(x.dtype)
    operands = (self, weight, grad_output)
    outs = (common.iterator_result(gs, self.dtype, self.device, operands),
            common.iterator_result(gw, weight.dtype, weight.device, operands))
    inputs = [grad_output, self, weight]
    if differentiable(inputs):
        record_multi_input(PRELU_KERNEL_BACKWARD, inputs, outs, {})
    for spec, out in zip(BACKWARD_JVPS, outs, strict=True):
        forward_ad.record_tangent(spec, inputs, out, {})
    return outs


def prelu_kernel(self: Tensor, weight: Tensor) -> Tensor:
    x, w = self._data, weight._data
    with np.errstate(all="ignore"):
        out = np.where(x > 0, x, w * x).astype(x.dtype)
    # the kernel writes into at::empty_like(self): self's layout
    result = common.in_layout_of(common.new(out, self.dtype, self.device), self)
    return record(PRELU_KERNEL, result, [self, weight])


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """ATen's prelu: the checks, then weight.reshape([1, C, 1, ...]) (a number of 1s as
    input has dims) unless their ranks agree."""
    if input.dtype is not weight.dtype:
        raise RuntimeError(messages.prelu_promotion(input.dtype.scalar_name,
                                                       weight.dtype.scalar_name))
    ndim = input.ndim
    if weight.numel() != 1:
        if ndim == 0:
            raise RuntimeError(messages.PRELU_ZERO_DIM)
        channels = input.shape[1] if ndim > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(messages.prelu_channels(weight.numel(), channels))
    if weight.ndim > 1:
        raise RuntimeError(messages.prelu_weight_dims(weight.ndim))
    if ndim != weight.ndim:
        shape = [1] * ndim
        if ndim > 1:
            shape[1] = weight.numel()
        weight = views.reshape(weight, shape)
    return prelu_kernel(input, weight)
