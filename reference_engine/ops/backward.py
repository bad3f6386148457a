"""The differentiable "backward ops" some derivatives.yaml formulas call.

torch writes e.g. relu's gradient as threshold_backward(grad, result, 0): an op with its
own derivatives.yaml entry, so a grad made with create_graph=True has a grad_fn named
ThresholdBackwardBackward0. Modelling these ops (rather than inlining their arithmetic)
keeps the graphs of higher-order grads identical to torch's.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, complex_polar
from .basic import elementwise as ops
from .basic import reductions as r


def _binary(spec: OpSpec, fn: Any, a: Tensor, b: Tensor, **attrs: Any) -> Tensor:
    dt = common.result_dtype([a, b])
    arr = common.compute_on(fn, a._data.astype(dt.np), b._data.astype(dt.np))
    out = common.iterator_result(arr, dt, common.common_device([a, b]), [a, b])
    return record(spec, out, [a, b], **attrs)


# ---- sgn (abs's gradient is grad * self.sgn()) -----------------------------------------

# sgn_backward is an efficient zero tensor for real inputs (torch's ZeroTensor): a gradient
# of zeros with no history. It counts as a gradient (the input is "used"), it adds nothing
# where it is accumulated, and its version numbers are kernel details the harness does not
# compare; a plain zeros tensor without history models all three.
SGN = OpSpec("SgnBackward0", ("self",), {"self": ("self", "result")},
             lambda c, g: [common.zeros_like(g)],
             jvp=lambda c: common.zeros_like(c.self_t))   # sgn_backward(self_p, self_t, result)


def sign_kernel(a: np.ndarray) -> np.ndarray:
    """ATen's sign kernel, (0 < a) - (a < 0): 0 for a nan, where np.sign gives nan."""
    return ((a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)).astype(a.dtype)


def sgn(self: Tensor) -> Tensor:
    if self.dtype.is_complex:   # z / |z|, with its own formula (sgn_backward)
        return complex_polar.sgn(self)
    return common.elementwise_op(SGN, sign_kernel, (self,))


# ---- threshold_backward (relu) ----------------------------------------------------------

THRESHOLD_BACKWARD = OpSpec(
    "ThresholdBackwardBackward0", ("grad_output", "self"), {"grad_output": ("self",)},
    lambda c, g: c.grads(lambda: threshold_backward(g, c.self, c.threshold),
                         lambda: common.zeros_like(g)),
    # zeros_like(self_t) + threshold_backward(grad_output_t, self_p, threshold)
    jvp=lambda c: ops.add(common.zeros_like(c.self_t),
                          threshold_backward(c.grad_output_t, c.self, c.threshold)))


def threshold_backward(grad_output: Tensor, self: Tensor, threshold: float) -> Tensor:
    # x <= threshold ? 0 : grad  (a masked grad is +0, never -0)
    return _binary(THRESHOLD_BACKWARD,
                   lambda go, x: np.where(x <= threshold, np.zeros((), go.dtype), go),
                   grad_output, self, threshold=threshold)


# ---- sigmoid_backward / tanh_backward ---------------------------------------------------

# The kernels conjugate the derivative for complex tensors (go * conj((1 - y) * y), go *
# conj(1 - y * y)); the formulas are derivatives.yaml's, whose .conj()s are the identity on
# real tensors.
SIGMOID_BACKWARD = OpSpec(
    "SigmoidBackwardBackward0", ("grad_output", "output"),
    {"grad_output": ("output",), "output": ("grad_output", "output")},
    # grad_output: sigmoid_backward(grad, output.conj())
    # output: grad.conj() * grad_output * (-2 * output.conj() + 1)
    lambda c, g: c.grads(
        lambda: sigmoid_backward(g, ops.conj_of(c.output)),
        lambda: ops.mul(ops.mul(ops.conj_of(g), c.grad_output),
                        ops.add_scalar(ops.mul_scalar(ops.conj_of(c.output), -2), 1))),
    # sigmoid_backward(grad_output_t, output_p)
    #   + output_t.conj() * grad_output_p * (-2 * output_p.conj() + 1)
    jvp=lambda c: ops.add(sigmoid_backward(c.grad_output_t, c.output),
                          ops.mul(ops.mul(ops.conj_of(c.output_t), c.grad_output),
                                  ops.add_scalar(ops.mul_scalar(ops.conj_of(c.output), -2),
                                                 1))))


def sigmoid_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    return _binary(SIGMOID_BACKWARD, lambda go, y: go * np.conj((1 - y) * y), grad_output,
                   output)


TANH_BACKWARD = OpSpec(
    "TanhBackwardBackward0", ("grad_output", "output"),
    {"grad_output": ("output",), "output": ("grad_output", "output")},
    # grad_output: tanh_backward(grad, output.conj())
    # output: grad.conj() * (-2 * output.conj() * grad_output)
    lambda c, g: c.grads(
        lambda: tanh_backward(g, ops.conj_of(c.output)),
        lambda: ops.mul(ops.conj_of(g),
                        ops.mul(ops.mul_scalar(ops.conj_of(c.output), -2), c.grad_output))),
    # tanh_backward(grad_output_t, output_p) + output_t.conj() * (-2 * output_p.conj() *
    #   grad_output_p)
    jvp=lambda c: ops.add(tanh_backward(c.grad_output_t, c.output),
                          ops.mul(ops.conj_of(c.output_t),
                                  ops.mul(ops.mul_scalar(ops.conj_of(c.output), -2),
                                          c.grad_output))))


def tanh_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    return _binary(TANH_BACKWARD, lambda go, y: go * np.conj(1 - y * y), grad_output, output)


# ---- softmax / log_softmax backward data ----------------------------------------------

def _softmax_double_backward(c: Any, g: Tensor) -> Tensor:
    go, out, d = c.grad_output, c.output, c.dim
    return ops.sub(ops.sub(ops.mul(go, g), ops.mul(r.sum_dim(ops.mul(out, go), d), g)),
                   ops.mul(go, r.sum_dim(ops.mul(out, g), d)))


SOFTMAX_BACKWARD_DATA = OpSpec(
    "SoftmaxBackwardDataBackward0", ("grad_output", "output"),
    {"grad_output": ("output",), "output": ("grad_output", "output")},
    lambda c, g: c.grads(lambda: softmax_backward_data(g, c.output, c.dim),
                         lambda: _softmax_double_backward(c, g)),
    jvp=lambda c: _softmax_backward_data_jvp(c))


def _softmax_backward_data_jvp(c: Any) -> Tensor:
    """d[y * (go - sum(go * y))]: the op on grad_output's tangent, plus output's tangent
    through both of its uses."""
    go, y, d = c.grad_output, c.output, c.dim
    return ops.add(softmax_backward_data(c.grad_output_t, y, d),
                   ops.sub(ops.mul(c.output_t, ops.sub(go, r.sum_dim(ops.mul(go, y), d))),
                           ops.mul(y, r.sum_dim(ops.mul(go, c.output_t), d))))


def _row_sum(a: np.ndarray, dim: int) -> np.ndarray:
    """The sum over `dim` as ATen's softmax backward kernels take it: over the last dim the
    vectorised kernel folds from the first element (a row of -0.0 sums to -0.0), over any
    other dim it accumulates from +0.0 as numpy does. Found by the generator: a softmax
    under a select whose other rows get a -0.0 gradient gave -0.0 where torch gives 0.0."""
    d = dim % a.ndim if a.ndim else 0
    if a.ndim == 0 or d != a.ndim - 1 or a.shape[d] == 0:   # (an empty row sums to 0)
        return a.sum(axis=dim, keepdims=True)
    return functools.reduce(np.add, np.moveaxis(a, d, 0))[..., None]


def softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int) -> Tensor:
    return _binary(SOFTMAX_BACKWARD_DATA,
                   lambda go, y: y * (go - _row_sum(go * y, dim)),
                   grad_output, output, dim=dim)


LOG_SOFTMAX_BACKWARD_DATA = OpSpec(
    "LogSoftmaxBackwardDataBackward0", ("grad_output", "output"),
    {"grad_output": ("output",), "output": ("grad_output", "output")},
    lambda c, g: c.grads(
        lambda: _log_softmax_grad_output_backward(c, g),
        lambda: _log_softmax_double_backward(c, g)),
    # d[go - exp(y) * sum(go)]: the op on grad_output's tangent, minus output's tangent
    # times exp(y) * sum(go)
    jvp=lambda c: ops.sub(log_softmax_backward_data(c.grad_output_t, c.output, c.dim),
                          ops.mul(c.output_t, _log_softmax_double_backward_terms(c))))


def _log_softmax_double_backward_terms(c: Any) -> Tensor:
    return ops.mul(ops.exp(c.output), r.sum_dim(c.grad_output, c.dim))


def _log_softmax_grad_output_backward(c: Any, g: Tensor) -> Tensor:
    """grad - (grad * output.exp()).sum(dim, true): the transpose of grad_output's map
    go - exp(y) * sum(go), which is not that map again (its sum is weighted by exp(y))."""
    return ops.sub(g, r.sum_dim(ops.mul(g, ops.exp(c.output)), c.dim))


def _log_softmax_double_backward(c: Any, g: Tensor) -> Tensor:
    return ops.mul(ops.mul(ops.neg(r.sum_dim(c.grad_output, c.dim)), ops.exp(c.output)), g)


def log_softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int) -> Tensor:
    return _binary(LOG_SOFTMAX_BACKWARD_DATA,
                   lambda go, y: go - np.exp(y) * _row_sum(go, dim),
                   grad_output, output, dim=dim)


# ---- mse_loss_backward ------------------------------------------------------------------

def _mse_scale(x: Tensor, reduction: str, numel: int) -> Tensor:
    """mse_loss_double_backward: 2 * x, divided by numel for reduction='mean'."""
    out = ops.mul_scalar(x, 2)
    return common.written_in_place(ops.div_scalar(out, numel)) if reduction == "mean" else out


MSE_LOSS_BACKWARD = OpSpec(
    "MseLossBackwardBackward0", ("grad_output", "self", "target"),
    {"grad_output": ("self", "target"), "self": ("grad_output",), "target": ("grad_output",)},
    lambda c, g: c.grads(
        lambda: _mse_grad_output(c, g),
        lambda: _mse_scale(ops.mul(g, c.grad_output), c.reduction, c.numel),
        lambda: ops.neg(_mse_scale(ops.mul(g, c.grad_output), c.reduction, c.numel))))


def _mse_grad_output(c: Any, g: Tensor) -> Tensor:
    if c.reduction == "none":
        return mse_loss_backward(g, c.self, c.target, c.reduction)
    ones = common.new(np.ones(c.grad_output.shape), c.grad_output.dtype, c.grad_output.device)
    return r.sum_all(ops.mul(mse_loss_backward(ones, c.self, c.target, c.reduction), g))


def mse_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                      reduction: str) -> Tensor:
    norm = 2.0 / self.numel() if reduction == "mean" else 2.0
    ts = [grad_output, self, target]
    dt = common.result_dtype(ts)
    arr = common.compute_on(lambda go, x, t: norm * (x - t) * go,
                       *(t._data.astype(dt.np) for t in ts))
    out = common.new(np.broadcast_to(arr, np.broadcast_shapes(self.shape, target.shape)), dt,
                  common.common_device(ts))
    return record(MSE_LOSS_BACKWARD, out, ts, reduction=reduction, numel=self.numel())
