"""The ops behind nn.functional: softmax, log_softmax, mse_loss (nll_loss: ops/nll.py).
Their backward formulas call the backward ops (ops/backward.py), as derivatives.yaml's do."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import backward as grad_ops
from . import common, moments
from .basic import elementwise as ops
from .basic import reductions, to_copy


def _logsumexp_jvp(self_t: Tensor, probabilities: Tensor, dim: int) -> Tensor:
    """logsumexp_jvp(self_p, self_t, {dim}, keepdim=true) for real inputs: the tangent
    averaged by the softmax, (self_t * softmax(self)).sum(dim, keepdim=True)."""
    return reductions.sum(ops.mul(self_t, probabilities), dim, keepdim=True)


SOFTMAX = OpSpec("SoftmaxBackward0", ("self",), {"self": ("result",)},
                 lambda c, g: [grad_ops.softmax_backward_data(g, c.result, c.dim)],
                 # result * (self_t - logsumexp_jvp(self_p, self_t, {dim}, true))
                 jvp=lambda c: ops.mul(c.result, ops.sub(
                     c.self_t, _logsumexp_jvp(c.self_t, c.result, c.dim))))
LOG_SOFTMAX = OpSpec("LogSoftmaxBackward0", ("self",), {"self": ("result",)},
                     lambda c, g: [grad_ops.log_softmax_backward_data(g, c.result, c.dim)],
                     # self_t - logsumexp_jvp(self_p, self_t, {dim}, true)
                     jvp=lambda c: ops.sub(c.self_t, _logsumexp_jvp(c.self_t, ops.exp(c.result),
                                                                    c.dim)))


def _stable_softmax(a: np.ndarray, d: int) -> np.ndarray:
    if a.size == 0:   # nothing to normalise (np.max of an empty axis would raise)
        return a.copy()
    with np.errstate(all="ignore"):   # an inf input gives nan, silently, in torch
        # initial: an empty dimension has no maximum (the result is empty too)
        e = np.exp(a - np.max(a, axis=d, keepdims=True, initial=-np.inf))
        return e / e.sum(axis=d, keepdims=True)


def _converted(self: Tensor, dtype: Any) -> Tensor:
    """softmax/log_softmax's `dtype=`: the input converted first (input_.toType(dtype)), so
    a conversion is a ToCopyBackward0 under the softmax's node."""
    return self if dtype is None else to_copy.to(self, dtype)


def _floating_softmax(name: str, t: Tensor, d: int) -> None:
    """SoftMaxKernel.cpp dispatches floating types only, by a kernel for the last dim (a 0-d
    tensor's too) and one for any other."""
    last = d == t.ndim - 1 or t.ndim == 0
    common.floating_kernel(f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl", t)


def softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    self = _converted(self, dtype)
    d = common.wrap_dim(dim, self.ndim)
    _floating_softmax("softmax", self, d)
    dt = common.float_dtype(self)
    out = common.new(_stable_softmax(self._data.astype(dt.np), d), dt, self.device)
    return record(SOFTMAX, out, [self], dim=d)


def log_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    self = _converted(self, dtype)
    d = common.wrap_dim(dim, self.ndim)
    _floating_softmax("log_softmax", self, d)
    dt = common.float_dtype(self)
    a = self._data.astype(dt.np)
    if a.size == 0:   # nothing to normalise (np.max of an empty axis would raise)
        return record(LOG_SOFTMAX, common.new(a, dt, self.device), [self], dim=d)
    with np.errstate(all="ignore"):   # an inf input gives nan, silently, in torch
        shifted = a - np.max(a, axis=d, keepdims=True, initial=-np.inf)
        logsum = np.log(np.exp(shifted).sum(axis=d, keepdims=True))
    out = common.new(shifted - logsum, dt, self.device)
    return record(LOG_SOFTMAX, out, [self], dim=d)
MSE = OpSpec(
    "MseLossBackward0", ("self", "target"),
    {"self": ("self", "target"), "target": ("self", "target")},
    lambda c, g: c.grads(
        lambda: grad_ops.mse_loss_backward(g, c.self, c.target, c.reduction),
        lambda: grad_ops.mse_loss_backward(g, c.target, c.self, c.reduction)),
    jvp=lambda c: _mse_jvp(c))


def _mse_jvp(c: Any) -> Tensor:
    """apply_loss_reduction(mse_loss_backward(self_t, self, target, none)
    + mse_loss_backward(target_t, target, self, none), reduction)"""
    both = ops.add(grad_ops.mse_loss_backward(c.self_t, c.self, c.target, "none"),
                   grad_ops.mse_loss_backward(c.target_t, c.target, c.self, "none"))
    if c.reduction == "mean":
        return moments.mean(both)
    return reductions.sum(both) if c.reduction == "sum" else both


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    diff = (input._data - target._data) ** 2
    value = diff.mean() if reduction == "mean" else diff.sum() if reduction == "sum" else diff
    dt, dev = common.result_dtype([input, target]), common.common_device([input, target])
    out = common.new(value, dt, dev)
    if reduction != "none":
        out = common.in_loss_storage(out, diff.size)
    return record(MSE, out, [input, target], reduction=reduction)
