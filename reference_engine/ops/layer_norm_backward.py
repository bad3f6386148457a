"""native_layer_norm's backward as ATen's op native_layer_norm_backward: the kernel's three
grads (input, weight, bias) are the outputs of one node, NativeLayerNormBackwardBackward0,
whose own backward is FunctionsManual's layer_norm_double_backward, written op for op so
that its values, signed zeros and refusals are torch's (derivatives.yaml:
`input, weight, grad_out: layer_norm_double_backward(...)`, `bias: Tensor()`, mean and rstd
not differentiable; the saved mean and rstd are constants of the formula)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import forward_ad, messages
from ..autograd_meta import OpSpec, differentiable, record_multi_input
from ..tensor import Tensor
from . import common
from .basic import elementwise as ops
from .basic import powers, reductions, views

INPUTS = ("grad_out", "input", "mean", "rstd", "weight", "bias")


def _rows(input: Tensor, normalized_shape: Sequence[int]) -> tuple[int, int]:
    """(M, N): the batch positions and the elements each one normalises."""
    axis = input.ndim - len(normalized_shape)
    return (int(np.prod(input.shape[:axis], dtype=np.int64)),
            int(np.prod(input.shape[axis:], dtype=np.int64)))


def _kernel(g: Tensor, input: Tensor, normalized_shape: Sequence[int], mean: Tensor,
            rstd: Tensor, weight: Tensor | None) -> tuple[np.ndarray, ...]:
    """LayerNormKernel.cpp's backward, row by row (M rows of N): ds = sum(dy * gamma * x),
    db = sum(dy * gamma), b = (db * mean - ds) * rstd^3 / N, c = -b * mean - db * rstd / N,
    dx = rstd * dy * gamma + b * x + c (its rounding: a one-element row's dx is not 0);
    dgamma = sum over rows of dy * (x - mean) * rstd, dbeta = sum over rows of dy."""
    m, n = _rows(input, normalized_shape)
    x = input._data
    x2 = x.reshape(m, n)
    dy = np.asarray(g._data, x.dtype).reshape(m, n)
    gamma = np.ones(n, x.dtype) if weight is None else weight._data.reshape(n)
    mu, r = mean._data.reshape(-1, 1), rstd._data.reshape(-1, 1)
    scale = x.dtype.type(1 / n) if n else x.dtype.type(0)
    with np.errstate(all="ignore"):
        ds = (dy * gamma * x2).sum(axis=1, keepdims=True)
        db = (dy * gamma).sum(axis=1, keepdims=True)
        b = (db * mu - ds) * r * r * r * scale
        cc = -b * mu - db * r * scale
        dx = r * dy * gamma + b * x2 + cc
        dgamma = (dy * (x2 - mu) * r).sum(axis=0)
    dbeta = dy.sum(axis=0)
    shape = tuple(normalized_shape)
    return dx.reshape(x.shape), dgamma.reshape(shape), dbeta.reshape(shape)


def native_layer_norm_backward(grad_out: Tensor, input: Tensor, normalized_shape: Sequence[int],
                               mean: Tensor, rstd: Tensor, weight: Tensor | None,
                               bias: Tensor | None, output_mask: Sequence[bool]
                               ) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """The three grads the mask asks for (None for the others), from one node."""
    values = _kernel(grad_out, input, normalized_shape, mean, rstd, weight)
    outs = [common.new(v, input.dtype, input.device) for v in values]
    inputs = [grad_out, input, mean, rstd, weight, bias]
    attrs = {"normalized_shape": tuple(normalized_shape)}
    if differentiable([grad_out, input, weight, bias]):
        record_multi_input(LAYER_NORM_BACKWARD, inputs, outs, attrs)
    for spec, out in zip(JVPS, outs, strict=True):
        forward_ad.record_tangent(spec, inputs, out, attrs)
    dx, dw, db = (out if wanted else None for out, wanted in zip(outs, output_mask, strict=True))
    return dx, dw, db


def layer_norm_double_backward(input_t: Tensor, gamma: Tensor | None, ggI: Tensor | None,
                               ggG: Tensor | None, ggB: Tensor | None, gO_t: Tensor,
                               save_mean_t: Tensor, save_invstd_t: Tensor,
                               normalized_shape: Sequence[int]
                               ) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """(gI, gG, ggO), FunctionsManual.cpp's formula in its order over (M, N) views. Without
    a weight ggB's term is an undefined tensor: added to a defined ggO it raises."""
    m, n = _rows(input_t, normalized_shape)
    input = views.reshape(input_t, (m, n))
    gO = views.reshape(gO_t, (m, n))
    mu = views.reshape(save_mean_t, (m, 1))
    s_1_2 = views.reshape(save_invstd_t, (m, 1))   # sigma2_eps_neg_1_2, (var + eps)^-1/2
    affine = gamma is not None
    ggG_e = ggB_e = None
    if gamma is not None:
        gamma_e = views.reshape(gamma, (1, n))
        ggG_e = None if ggG is None else views.reshape(ggG, (1, n))
        ggB_e = None if ggB is None else views.reshape(ggB, (1, n))
    else:
        gamma_e = common.new(np.ones(1), input.dtype, input.device)
    ggI_e = None if ggI is None else views.reshape(ggI, (m, n))

    def rowsum(t: Tensor) -> Tensor:
        return reductions.sum(t, 1, keepdim=True)

    centred = ops.sub(input, mu)
    s_1 = powers.pow(s_1_2, 2)
    s_3_2 = powers.pow(s_1_2, 3)
    centred_s_3_2 = ops.mul(centred, s_3_2)
    gI = None
    if ggI_e is not None:
        gxhat = ops.mul(gO, gamma_e)
        gxhat_mu_sum = rowsum(ops.mul(gxhat, centred))
        gxhat_sum = rowsum(gxhat)
        ggI_sum = rowsum(ggI_e)
        ggI_mu_sum = rowsum(ops.mul(ggI_e, centred))
        all_sub = ops.add(ops.sub(ops.div_scalar(ops.mul(ggI_sum, gxhat_sum), n),
                                  rowsum(ops.mul(ggI_e, gxhat))),
                          ops.mul_scalar(ops.mul(ops.mul(s_1, gxhat_mu_sum), ggI_mu_sum),
                                         3.0 / n))
        gI_0t = ops.div_scalar(ops.mul(centred_s_3_2, all_sub), n)
        gI_1t = ops.mul(ops.div_scalar(ops.mul(ggI_mu_sum, s_3_2), n),
                        ops.sub(ops.div_scalar(gxhat_sum, n), gxhat))
        gI_2t = ops.mul(ops.div_scalar(ops.mul(gxhat_mu_sum, s_3_2), n),
                        ops.sub(ops.div_scalar(ggI_sum, n), ggI_e))
        gI = ops.add(ops.add(gI_0t, gI_1t), gI_2t)
    if affine and ggG_e is not None:
        t0 = ops.mul(ops.mul(gO, ggG_e), s_1_2)
        t1 = ops.div_scalar(ops.mul(s_1_2, rowsum(ops.mul(gO, ggG_e))), -n)
        t2 = ops.div_scalar(ops.mul(centred_s_3_2,
                                    rowsum(ops.mul(ops.mul(gO, ggG_e), centred))), -n)
        term = ops.add(ops.add(t0, t1), t2)
        gI = term if gI is None else ops.add(gI, term)
    if gI is not None:
        gI = views.reshape(gI, tuple(input_t.shape))

    def first_backward(g: Tensor, gamma_local: Tensor) -> Tensor:
        """The first backward's grad_input for a grad g and weight gamma_local."""
        h0 = ops.div_scalar(ops.mul(gamma_local, s_1_2), n)
        h1 = ops.sub(ops.sub(ops.mul_scalar(g, n), rowsum(g)),
                     ops.mul(ops.mul(centred, s_1), rowsum(ops.mul(g, centred))))
        return ops.mul(h0, h1)

    gG = None
    if gamma is not None and ggI_e is not None:
        one = common.new(np.ones(()), input.dtype, input.device)
        gG = views.reshape(reductions.sum(ops.mul(gO, first_backward(ggI_e, one)), 0),
                           tuple(gamma.shape))
    ggO = None if ggI_e is None else first_backward(ggI_e, gamma_e)
    if ggG_e is not None:
        term = ops.mul(ops.mul(ggG_e, centred), s_1_2)
        ggO = term if ggO is None else ops.add(ggO, term)
    if ggB is not None:
        if ggB_e is None and ggO is not None:   # at::add_ of an undefined `other`
            raise RuntimeError(messages.undefined_argument(1, "other"))
        ggO = ggB_e if ggO is None else ops.add(ggO, ggB_e)
    if ggO is not None:
        ggO = views.reshape(reductions.expand(ggO, (m, n)), tuple(input_t.shape))
    return gI, gG, ggO


def _double_backward(c: Any, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
    """grads[0..2] are the input's, weight's and bias's grads' grads (ggI, ggG, ggB);
    the edges are INPUTS'."""
    want = c._node.should_compute
    if not (want(0) or want(1) or want(4)):
        return [None] * len(INPUTS)
    ggI, ggG, ggB = grads
    gI, gG, ggO = layer_norm_double_backward(
        c.input, c.__dict__.get("weight"), ggI, ggG, ggB, c.grad_out, c.mean, c.rstd,
        c.normalized_shape)
    return [ggO if want(0) else None, gI if want(1) else None, None, None,
            gG if want(4) else None, None]


_SAVED = ("grad_out", "input", "mean", "rstd", "weight")
LAYER_NORM_BACKWARD = OpSpec("NativeLayerNormBackwardBackward0", INPUTS,
                             dict.fromkeys(("grad_out", "input", "weight"), _SAVED),
                             _double_backward)   # type: ignore[arg-type]


def _jvps(c: Any) -> tuple[Tensor, Tensor, Tensor]:
    """The grads are linear in grad_out, and their derivative in (input, weight) is the
    Hessian of <grad_out, layer_norm> that the double backward applies (symmetric): so the
    tangents are the backward of grad_out's tangent plus the double backward of the input's
    and weight's tangents (the bias's drops out: the grads do not depend on it)."""
    weight = c.weight
    linear = native_layer_norm_backward(c.grad_out_t, c.input, c.normalized_shape, c.mean,
                                        c.rstd, weight, None, (True, True, True))
    gI, gG, _ = layer_norm_double_backward(
        c.input, weight, c.input_t, None if weight is None else c.weight_t, None, c.grad_out,
        c.mean, c.rstd, c.normalized_shape)
    dx, dw, db = linear
    assert dx is not None and dw is not None and db is not None
    return (dx if gI is None else ops.add(dx, gI), dw if gG is None else ops.add(dw, gG), db)


def _jvp_spec(index: int) -> OpSpec:
    return OpSpec("NativeLayerNormBackwardBackward0", INPUTS, jvp=lambda c: _jvps(c)[index])


JVPS = tuple(_jvp_spec(i) for i in range(3))
