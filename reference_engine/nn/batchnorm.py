"""Batch normalisation in eval mode (nn.BatchNorm1d's, in nn/__init__.py): native_batch_norm
with the running statistics (node NativeBatchNormBackward0, edges to input, weight and
bias). Training mode (batch statistics and the running-statistics update) is not modelled:
the module raises. The forward is ATen's eval
transform, x * alpha + beta with alpha = weight / sqrt(running_var + eps) and
beta = bias - running_mean * alpha per channel (dim 1); the backward is grad * alpha for the
input and the per-channel sums for weight and bias, written in engine ops so a create_graph
backward differentiates them (its nodes are those ops', not NativeBatchNormBackwardBackward0).
The node saves the input and weight for these formulas (torch also saves the running
statistics and two empty results: pack hooks see fewer tensors here)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd_meta import OpSpec, record
from ..ops import common
from ..ops.basic import elementwise as ops
from ..ops.basic import reductions
from ..tensor import Tensor


def _per_channel(a: np.ndarray, ndim: int) -> np.ndarray:
    return a.reshape((1, -1) + (1,) * (ndim - 2))


def _backward(c: Any, g: Tensor) -> list[Tensor | None]:
    shape = (1, -1) + (1,) * (c.ndim - 2)
    invstd = common.new(_per_channel(c.invstd, c.ndim), g.dtype, g.device)
    mean = common.new(_per_channel(c.mean, c.ndim), g.dtype, g.device)
    batch = tuple(d for d in range(c.ndim) if d != 1)

    def input_grad() -> Tensor:
        weight = c.__dict__.get("weight")   # nothing saved where there is none
        return ops.mul(g, invstd if weight is None else ops.mul(invstd, weight.reshape(shape)))

    return c.grads(
        input_grad,
        lambda: reductions.sum(ops.mul(g, ops.mul(ops.sub(c.input, mean), invstd)), batch),
        lambda: reductions.sum(g, batch))


NATIVE_BATCH_NORM = OpSpec("NativeBatchNormBackward0", ("input", "weight", "bias"),
                           {"input": ("weight",), "weight": ("input",)}, _backward)


def batch_norm_eval(input: Tensor, running_mean: Tensor, running_var: Tensor,
                    weight: Tensor | None, bias: Tensor | None, eps: float) -> Tensor:
    a = input._data
    dt = a.dtype
    invstd = (1 / np.sqrt(running_var._data.astype(np.float64) + eps)).astype(dt)
    alpha = invstd if weight is None else (weight._data * invstd).astype(dt)
    beta = (-running_mean._data * alpha if bias is None
            else bias._data - running_mean._data * alpha).astype(dt)
    y = a * _per_channel(alpha, a.ndim) + _per_channel(beta, a.ndim)
    out = common.new(y.astype(dt), input.dtype, input.device)
    return record(NATIVE_BATCH_NORM, out, [input, weight, bias], eps=eps, ndim=a.ndim,
                  mean=running_mean._data.astype(dt), invstd=invstd)
