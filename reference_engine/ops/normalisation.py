"""Normalisations: native_layer_norm (F.layer_norm), native_group_norm (F.group_norm) and
F.rms_norm (ATen's composite of pow, mean, add, rsqrt and mul, so its graph is theirs).

The forwards compute the mean and rstd = 1 / sqrt(biased var + eps) in numpy, in float64,
rounded to the input's dtype (ATen's kernels accumulate in float for float32: the last bit
may differ). Each backward is the normalisation's gradient written in engine ops; under
create_graph it recomputes the mean and rstd from the input in engine ops, so its own
derivative counts their dependence on the input, as ATen's double-backward formulas
(infinitely_differentiable_native_group_norm_backward) does. native_layer_norm's backward is
ATen's op native_layer_norm_backward, one node for its three grads (ops/layer_norm_backward.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import forward_ad, messages
from ..autograd_meta import OpSpec, differentiable, record, record_multi_input
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor
from . import common, moments, shape_views
from .basic import elementwise as ops
from .basic import powers, reductions, views
from .layer_norm_backward import native_layer_norm_backward
from .unary_math import rsqrt

Dims = tuple[int, ...]


def _moments(a: np.ndarray, axes: Dims, eps: float, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    """The mean and rstd over `axes` (kept): the mean and variance in float64, rounded to
    the dtype, the rstd from them in the dtype as the kernels compute it."""
    a64 = a.astype(np.float64)
    if a.size == 0:
        shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
        return np.zeros(shape, dt), np.zeros(shape, dt)
    mean = a64.mean(axis=axes, keepdims=True)
    var = ((a64 - mean) ** 2).mean(axis=axes, keepdims=True).astype(dt)
    one = np.dtype(dt).type(1)
    with np.errstate(all="ignore"):   # a negative eps may leave var + eps < 0: nan
        # the kernels' 1 / sqrt(max(var, 0) + eps), in the accumulation type
        rstd = one / np.sqrt(np.maximum(var, 0) + np.dtype(dt).type(eps))
    return mean.astype(dt), rstd.astype(dt)


def centred_input(x: Tensor, dims: Dims, eps: float, mean: Tensor, rstd: Tensor
                  ) -> tuple[Tensor, Tensor]:
    """(x - mean, rstd) for a backward: from the saved mean and rstd, or under create_graph
    recomputed from x in engine ops so that their dependence on x is differentiated."""
    if not is_grad_enabled():
        return ops.sub(x, mean), rstd
    mu = moments.mean(x, dims, keepdim=True)
    centred = ops.sub(x, mu)
    var = moments.mean(ops.mul(centred, centred), dims, keepdim=True)
    return centred, rsqrt(ops.add_scalar(var, eps))


def normalised_grad(g_hat: Tensor, centred: Tensor, rstd: Tensor, dims: Dims) -> Tensor:
    """d(x_hat) -> dx for x_hat = (x - mean) * rstd over dims:
    rstd * (g - mean(g) - x_hat * mean(g * x_hat))."""
    x_hat = ops.mul(centred, rstd)
    mean_g = moments.mean(g_hat, dims, keepdim=True)
    mean_gx = moments.mean(ops.mul(g_hat, x_hat), dims, keepdim=True)
    return ops.mul(rstd, ops.sub(ops.sub(g_hat, mean_g), ops.mul(x_hat, mean_gx)))


def normalised_jvp(x_t: Tensor, centred: Tensor, rstd: Tensor, dims: Dims) -> Tensor:
    """The tangent of x_hat: (dx - mean(dx)) * rstd + (x - mean) * drstd, where
    drstd = -rstd^3 * mean((x - mean) * (dx - mean(dx)))."""
    dx = ops.sub(x_t, moments.mean(x_t, dims, keepdim=True))
    cubed = ops.mul(ops.mul(rstd, rstd), rstd)
    drstd = ops.neg(ops.mul(cubed, moments.mean(ops.mul(centred, dx), dims, keepdim=True)))
    return ops.add(ops.mul(dx, rstd), ops.mul(centred, drstd))


def _weight(c: Any) -> Tensor | None:
    """The saved weight, None where there is none (nothing saved)."""
    return c.__dict__.get("weight")


def _sum_to(t: Tensor, dims: Dims) -> Tensor:
    return reductions.sum(t, dims) if dims else t


# ---- native_layer_norm, F.layer_norm ----------------------------------------------------------

def _layer_dims(c: Any) -> tuple[Dims, Dims]:
    """(the normalised dims, the batch dims) of c.input."""
    ndim, k = c.input.ndim, len(c.normalized_shape)
    return tuple(range(ndim - k, ndim)), tuple(range(ndim - k))


def _layer_norm_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """native_layer_norm_backward: one op (and, under create_graph, one node) for the
    three grads the mask asks for."""
    mask = [c._node.should_compute(i) for i in range(3)]
    return list(native_layer_norm_backward(g, c.input, c.normalized_shape, c.result1,
                                           c.result2, _weight(c), c.__dict__.get("bias"),
                                           mask))


def _layer_norm_jvp(c: Any) -> Tensor:
    dims, _ = _layer_dims(c)
    centred = ops.sub(c.input, c.result1)
    out = normalised_jvp(c.input_t, centred, c.result2, dims)
    if c.weight is not None:
        x_hat = ops.mul(centred, c.result2)
        out = ops.add(ops.mul(out, c.weight), ops.mul(x_hat, c.weight_t))
    return out if c.bias is None else ops.add(out, c.bias_t)


NATIVE_LAYER_NORM = OpSpec(
    "NativeLayerNormBackward0", ("input", "weight", "bias"),
    dict.fromkeys(("input", "weight", "bias"), ("input", "weight", "bias", "result1",
                                                "result2")),
    _layer_norm_backward, saved_outputs=("result1", "result2"), jvp=_layer_norm_jvp)


def _check_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None,
                      bias: Tensor | None, rms: bool) -> None:
    """layer_norm.h _check_layer_norm_inputs (rms_norm's text has no comma after `*`)."""
    shape = [int(s) for s in normalized_shape]
    if not shape:
        raise RuntimeError(messages.norm_shape_empty(shape))
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(messages.norm_affine_shape(name, tuple(t.shape), shape))
    if rms and input.ndim < len(shape):
        raise ValueError(messages.rms_norm_input_dims(len(shape), input.ndim))
    if input.ndim < len(shape) or list(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(messages.norm_input_shape(shape, tuple(input.shape), rms))


def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(output, mean, rstd): mean and rstd of the leading dims' shape with ones after, not
    differentiable."""
    _check_layer_norm(input, normalized_shape, weight, bias, False)
    k = len(normalized_shape)
    dims = tuple(range(input.ndim - k, input.ndim))
    a = input._data
    mean, rstd = _moments(a, dims, eps, a.dtype)
    zero = a.dtype.type(0)
    with np.errstate(all="ignore"):   # LayerNormKernel.cpp: (x * rstd - rstd * mean) * w + b
        y = (a * rstd + (-rstd * mean)) * (1 if weight is None else weight._data) \
            + (zero if bias is None else bias._data)
    out = common.new(y, input.dtype, input.device)
    m = common.new(mean, input.dtype, input.device)
    r = common.new(rstd, input.dtype, input.device)
    record(NATIVE_LAYER_NORM, out, [input, weight, bias],
           normalized_shape=tuple(int(s) for s in normalized_shape), eps=eps,
           result1=m, result2=r)
    return out, m, r


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


# ---- F.rms_norm -------------------------------------------------------------------------------

def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """ATen's rms_norm composite: input * rsqrt(input.pow(2).mean(dims, keepdim).add_(eps)),
    times weight; eps defaults to the dtype's machine epsilon."""
    _check_layer_norm(input, normalized_shape, weight, None, True)
    k = len(normalized_shape)
    dims = tuple(range(input.ndim - k, input.ndim))
    value = float(np.finfo(input.dtype.np).eps) if eps is None else eps
    squares = moments.mean(powers.pow(input, 2), dims, keepdim=True)
    out = ops.mul(input, rsqrt(ops.add_scalar(squares, value)))
    return out if weight is None else ops.mul(out, weight)


# ---- native_group_norm, F.group_norm ----------------------------------------------------------

def _grouped(t: Tensor, c: Any) -> Tensor:
    """(N, C, *) as (N, group, C / group * HxW)."""
    return views.reshape(t, (c.N, c.group, c.C // c.group * c.HxW))


def _channel(t: Tensor, ndim: int) -> Tensor:
    """A per-channel (C,) tensor viewed to broadcast against (N, C, *)."""
    return views.view(t, (t.shape[0], *([1] * (ndim - 2))))


def _group_norm_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    g, g_mean, g_rstd = gs
    # torch (measured at 2.13, float64, against a composite's gradients): the mean's and
    # rstd's gradients reach the input only when both are defined; either alone is not read
    # and, without the output's, the inputs get no gradient (found by the generator: a loss
    # of rstd alone left torch's x.grad None)
    moments = g_mean is not None and g_rstd is not None
    if g is None and not moments:
        return [None, None, None]
    x = c.input
    shape = tuple(x.shape)
    xg = _grouped(x, c)
    centred, rstd = centred_input(xg, (2,), c.eps, views.unsqueeze(c.result1, -1),
                                  views.unsqueeze(c.result2, -1))
    batch = tuple(d for d in range(x.ndim) if d != 1)

    def grad_input() -> Tensor:
        out: Tensor | None = None
        if g is not None:
            gw = g if _weight(c) is None else ops.mul(g, _channel(c.weight, x.ndim))
            out = normalised_grad(_grouped(gw, c), centred, rstd, (2,))
        d = xg.shape[2]
        if moments:
            assert g_mean is not None and g_rstd is not None
            # mean: 1 / D of each element of its group; rstd: -rstd^3 (x - mean) / D
            term = ops.div_scalar(
                reductions.expand(views.unsqueeze(g_mean, -1), tuple(xg.shape)), d)
            out = term if out is None else ops.add(out, term)
            cubed = ops.mul(ops.mul(rstd, rstd), rstd)
            term = ops.div_scalar(ops.neg(ops.mul(ops.mul(views.unsqueeze(g_rstd, -1), cubed),
                                                  centred)), d)
            out = ops.add(out, term)
        assert out is not None
        return views.reshape(out, shape)

    def x_hat() -> Tensor:
        return views.reshape(ops.mul(centred, rstd), shape)

    return c.grads(
        grad_input,
        lambda: None if g is None else _sum_to(ops.mul(g, x_hat()), batch),
        lambda: None if g is None else _sum_to(g, batch))


NATIVE_GROUP_NORM = OpSpec(
    "NativeGroupNormBackward0", ("input", "weight", "bias"),
    dict.fromkeys(("input", "weight", "bias"), ("input", "weight", "result1", "result2")),
    _group_norm_backward,  # type: ignore[arg-type]
    saved_outputs=("result1", "result2"))


def _group_jvps(c: Any) -> tuple[Tensor, Tensor, Tensor]:
    """group_norm_jvp, group_norm_mean_jvp, group_norm_invstd_jvp."""
    x, x_t = c.input, c.input_t
    xg, xg_t = _grouped(x, c), _grouped(x_t, c)
    mean, rstd = views.unsqueeze(c.result1, -1), views.unsqueeze(c.result2, -1)
    centred = ops.sub(xg, mean)
    dmean = moments.mean(xg_t, (2,), keepdim=True)
    cubed = ops.mul(ops.mul(rstd, rstd), rstd)
    drstd = ops.neg(ops.mul(cubed, moments.mean(ops.mul(centred, ops.sub(xg_t, dmean)), (2,),
                                                   keepdim=True)))
    out = views.reshape(normalised_jvp(xg_t, centred, rstd, (2,)), tuple(x.shape))
    if c.weight is not None:
        x_hat = views.reshape(ops.mul(centred, rstd), tuple(x.shape))
        out = ops.add(ops.mul(out, _channel(c.weight, x.ndim)),
                      ops.mul(x_hat, _channel(c.weight_t, x.ndim)))
    if c.bias is not None:
        out = ops.add(out, _channel(c.bias_t, x.ndim))
    return out, views.squeeze(dmean, -1), views.squeeze(drstd, -1)


def _group_jvp_spec(index: int) -> OpSpec:
    return OpSpec("NativeGroupNormBackward0", ("input", "weight", "bias"),
                  jvp=lambda c: _group_jvps(c)[index])


GROUP_NORM_JVPS = tuple(_group_jvp_spec(i) for i in range(3))


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,
                      C: int, HxW: int, group: int, eps: float
                      ) -> tuple[Tensor, Tensor, Tensor]:
    """(output, mean, rstd), mean and rstd of shape (N, group): all three require grad
    (which gradients reach the inputs: _group_norm_backward)."""
    a = input._data.reshape(N, group, C // group * HxW)
    mean, rstd = _moments(a, (2,), eps, input._data.dtype)
    y = ((a - mean) * rstd).reshape(input.shape)
    bshape = (C, *([1] * (input.ndim - 2)))
    if weight is not None:
        y = y * weight._data.reshape(bshape)
    if bias is not None:
        y = y + bias._data.reshape(bshape)
    outs = (common.new(y, input.dtype, input.device),
            common.new(mean.reshape(N, group), input.dtype, input.device),
            common.new(rstd.reshape(N, group), input.dtype, input.device))
    attrs = {"N": N, "C": C, "HxW": HxW, "group": group, "eps": eps, "result1": outs[1],
             "result2": outs[2]}
    if differentiable([input, weight, bias]):
        record_multi_input(NATIVE_GROUP_NORM, [input, weight, bias], outs,
                           attrs)
    for spec, out in zip(GROUP_NORM_JVPS, outs, strict=True):
        forward_ad.record_tangent(spec, [input, weight, bias], out, attrs)
    return outs


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """F.group_norm (its checks) over ATen's group_norm: native_group_norm of the
    contiguous input, its output."""
    if input.ndim < 2:
        raise RuntimeError(messages.group_norm_dims(input.ndim))
    n, c = input.shape[0], input.shape[1]
    sizes = [n * c // num_groups, num_groups, *input.shape[2:]]
    if int(np.prod(sizes)) == 1:
        raise ValueError(messages.batch_size_one(sizes))
    if c % num_groups != 0:
        raise RuntimeError(messages.group_norm_groups(tuple(input.shape), num_groups))
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(messages.group_norm_affine(name, tuple(t.shape),
                                                          tuple(input.shape)))
    hxw = int(np.prod(input.shape[2:], dtype=np.int64))
    x = shape_views.contiguous(input)
    return native_group_norm(x, weight, bias, n, c, hxw, num_groups, eps)[0]

