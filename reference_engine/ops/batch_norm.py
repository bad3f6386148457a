"""Batch and instance normalisation: native_batch_norm, F.batch_norm (torch.batch_norm:
_batch_norm_impl_index, which on the CPU is native_batch_norm) and F.instance_norm (ATen's
instance_norm composite: a batch norm of the input viewed as one batch of N * C channels).

native_batch_norm returns (output, save_mean, save_invstd), the output's node
NativeBatchNormBackward0 over input, weight and bias (the other two are not
differentiable); it saves what torch saves (input, running_mean, running_var,
weight, then the two results). In training mode the statistics are the batch's
(mean and biased variance per channel, dim 1, accumulated in float64 as ATen's CPU kernel
does) and the running statistics are updated in place: momentum * batch + (1 - momentum) *
running, the variance unbiased. ATen's schema does not mark them mutable, so their version
does not change. In evaluation mode the running statistics normalise, and the two results
are empty. The backward is written in engine ops; under create_graph it recomputes the
batch statistics from the input (normalisation.py's _centred), so a second derivative is
batchnorm_double_backward's (its node names are those ops', not
NativeBatchNormBackwardBackward0)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, moments, normalisation, shape, shape_views
from .basic import copying, reductions, views
from .basic import elementwise as ops
from .unary_math import rsqrt

Dims = tuple[int, ...]


def _dims(ndim: int) -> Dims:
    """The dims a channel's statistics run over: all but dim 1."""
    return tuple(d for d in range(ndim) if d != 1)


def _channel(t: Tensor, ndim: int) -> Tensor:
    """A (C,) tensor viewed to broadcast against (N, C, *)."""
    return views.view(t, (t.shape[0], *([1] * (ndim - 2))))


def _eval_stats(c: Any, ndim: int) -> tuple[Tensor, Tensor]:
    """(running_mean, 1 / sqrt(running_var + eps)), per channel, broadcastable."""
    rm, rv = c.running_mean, c.running_var
    return _channel(rm, ndim), _channel(rsqrt(ops.add_scalar(rv, c.eps)), ndim)


def _bias_grad_backward(c: Any, gg: Tensor) -> list[Tensor | None]:
    """dbias = grad summed over all dims but 1: its grad_out's grad is gg broadcast."""
    return [reductions.expand(_channel(gg, len(c.grad_shape)), c.grad_shape), None, None]


# ATen's one node (NativeBatchNormBackwardBackward0) gives all three grads: the bias's
# requires grad under create_graph as the others do; here the node of the bias's grad alone
BATCH_NORM_BIAS_GRAD = OpSpec("NativeBatchNormBackwardBackward0",
                              ("grad_out", "input", "weight"), {}, _bias_grad_backward)


def _bias_grad(c: Any, g: Tensor, dims: Dims) -> Tensor:
    db = common.new(np.asarray(g._data).sum(axis=dims), g.dtype, g.device)
    return record(BATCH_NORM_BIAS_GRAD, db, [g, c.input, c.__dict__.get("weight")],
                  grad_shape=tuple(g.shape))


def _backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """native_batch_norm_backward's three grads (the mean and invstd outputs are not
    differentiable)."""
    x = c.input
    dims = _dims(x.ndim)
    weight = c.__dict__.get("weight")   # nothing saved where there is none
    if c.training:
        centred, invstd = normalisation.centred_input(
            x, dims, c.eps, _channel(c.result1, x.ndim), _channel(c.result2, x.ndim))
    else:
        mean, invstd = _eval_stats(c, x.ndim)
        centred = ops.sub(x, mean)

    def grad_input() -> Tensor:
        gw = g if weight is None else ops.mul(g, _channel(weight, x.ndim))
        if c.training:
            return normalisation.normalised_grad(gw, centred, invstd, dims)
        return ops.mul(gw, invstd)

    return c.grads(grad_input,
                   lambda: reductions.sum(ops.mul(g, ops.mul(centred, invstd)), dims),
                   lambda: _bias_grad(c, g, dims))


NATIVE_BATCH_NORM = OpSpec(
    "NativeBatchNormBackward0", ("input", "weight", "bias"),
    dict.fromkeys(("input", "weight", "bias"), ("input", "weight", "running_mean",
                                                "running_var", "result1", "result2")),
    _backward, saved_outputs=("result1", "result2"), jvp=lambda c: _jvp(c))


def _jvp(c: Any) -> Tensor:
    """batch_norm_jvp (FunctionsManual.cpp)."""
    x, ndim = c.input, c.input.ndim
    dims = _dims(ndim)
    if c.training:
        mean, invstd = _channel(c.result1, ndim), _channel(c.result2, ndim)
        centred = ops.sub(x, mean)
        out = normalisation.normalised_jvp(c.input_t, centred, invstd, dims)
    else:
        mean, invstd = _eval_stats(c, ndim)
        centred = ops.sub(x, mean)
        out = ops.mul(c.input_t, invstd)
    if c.weight is not None:
        w = _channel(c.weight, ndim)
        out = ops.add(ops.mul(out, w),
                      ops.mul(ops.mul(centred, invstd), _channel(c.weight_t, ndim)))
    if c.bias is not None:
        out = ops.add(out, _channel(c.bias_t, ndim))
    return out



def _statistics(a: np.ndarray, eps: float, training: bool, running_mean: Tensor | None,
                running_var: Tensor | None, momentum: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(mean, invstd) that normalise, per channel, and the results (save_mean, save_invstd):
    batch_norm_cpu_update_stats_template in training (the running statistics updated in
    place), the running statistics and two empty results in evaluation."""
    dt = a.dtype
    if not training:
        assert running_mean is not None and running_var is not None
        rv = running_var._data.astype(np.float64)
        invstd = (1 / np.sqrt(rv + eps)).astype(dt)
        empty = np.zeros((0,), dt)
        return running_mean._data, invstd, empty, empty
    dims = _dims(a.ndim)
    a64 = a.astype(np.float64)
    n = a.size // a.shape[1]
    mean = a64.mean(axis=dims)
    var_sum = ((a64 - mean.reshape(_channel_shape(a.ndim))) ** 2).sum(axis=dims)
    with np.errstate(all="ignore"):
        invstd = 1 / np.sqrt(var_sum / n + eps)
        if running_mean is not None:
            running_mean._data[...] = momentum * mean + (1 - momentum) * running_mean._data
        if running_var is not None:
            unbiased = var_sum / (n - 1) if n > 1 else np.full_like(var_sum, np.nan)
            running_var._data[...] = momentum * unbiased + (1 - momentum) * running_var._data
    return mean.astype(dt), invstd.astype(dt), mean.astype(dt), invstd.astype(dt)


def _channel_shape(ndim: int) -> tuple[int, ...]:
    return (1, -1) + (1,) * (ndim - 2)


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    a = input._data
    dt, cs = a.dtype, _channel_shape(a.ndim)
    mean, invstd, r1, r2 = _statistics(a, eps, training, running_mean, running_var, momentum)
    # batch_norm_cpu_transform_input: x * alpha + beta, alpha = invstd * weight,
    # beta = bias - mean * alpha
    alpha = invstd.astype(np.float64) * (1 if weight is None else weight._data)
    beta = (0 if bias is None else bias._data) - mean.astype(np.float64) * alpha
    with np.errstate(all="ignore"):
        y = (a * alpha.reshape(cs) + beta.reshape(cs)).astype(dt)
    outs = (common.new(y, input.dtype, input.device), common.new(r1, input.dtype, input.device),
            common.new(r2, input.dtype, input.device))
    attrs = {"training": bool(training), "eps": float(eps), "result1": outs[1],
             "result2": outs[2], "running_mean": running_mean, "running_var": running_var}
    record(NATIVE_BATCH_NORM, outs[0], [input, weight, bias], **attrs)
    return outs


def _check_features(name: str, t: Tensor | None, features: int) -> None:
    if t is not None and t.numel() != features:
        raise RuntimeError(messages.batch_norm_features(name, features, t.numel()))


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """F.batch_norm: its batch-size check, then _batch_norm_impl_index's checks (an empty
    input is cloned, scaled by weight[0] and shifted by bias[0])."""
    if training:
        size = list(input.shape)
        if size[0] * int(np.prod(size[2:], dtype=np.int64)) == 1:
            raise ValueError(messages.batch_norm_batch_size(size))
    if input.numel() == 0:
        out = copying.clone(input)
        if weight is not None:
            out = ops.mul(out, views.select(weight, 0, 0))
        if bias is not None:
            out = ops.add(out, views.select(bias, 0, 0))
        return out
    features = input.shape[1]
    for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
        if stat is None and not training:
            raise RuntimeError(messages.batch_norm_undefined(name))
        _check_features(name, stat, features)
    _check_features("weight", weight, features)
    _check_features("bias", bias, features)
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)[0]


def _repeat(t: Tensor | None, times: int) -> Tensor | None:
    return None if t is None else shape.repeat(t, times)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """F.instance_norm's spatial-size check, then ATen's instance_norm: a batch norm of
    input.contiguous().view(1, N * C, *) with weight, bias and the running statistics
    repeated N times, the running statistics' batch means copied back."""
    if use_input_stats:
        size = list(input.shape)
        if int(np.prod(size[2:], dtype=np.int64)) == 1:
            raise ValueError(messages.instance_norm_spatial_size(size))
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(messages.INSTANCE_NORM_RUNNING_STATS)
    b, c = input.shape[0], input.shape[1]
    stats = [_repeat(running_mean, b), _repeat(running_var, b)]
    reshaped = views.view(shape_views.contiguous(input), (1, b * c, *input.shape[2:]))
    out = batch_norm(reshaped, stats[0], stats[1], _repeat(weight, b), _repeat(bias, b),
                     use_input_stats, momentum, eps)
    for running, repeated in zip((running_mean, running_var), stats, strict=True):
        if running is not None and repeated is not None:
            batch_mean = moments.mean(views.view(repeated, (b, c)), 0, False)
            running._data[...] = batch_mean._data
            running._version_counter.bump()
    return views.view(out, tuple(input.shape))
