"""nn.functional's losses and distances that torch composes of other ops: margin_ranking,
hinge_embedding, cosine_embedding, kl_div and poisson_nll (ATen's Loss.cpp), gaussian_nll
and multilabel_soft_margin (Python, torch/nn/functional.py), normalize (Python),
cosine_similarity and pairwise_distance (ATen's Distance.cpp). Each is written in the same
engine ops, one for one, so its graph names torch's nodes. C++'s operators on a Scalar
(TensorOperators.h) are `tensor op Scalar` -> add/sub/mul.Scalar (Add/Sub/MulBackward1)
and `Scalar - tensor` -> empty_like.fill_.sub_ (SubBackward0); Python's wrap the number
(Add/Sub/MulBackward0, rsub: RsubBackward1)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..grad_mode import no_grad
from ..tensor import Tensor
from . import activations, binary_math, inplace_ops, moments, norms, piecewise, shape_views
from .basic import comparisons, copying, indexing, powers, views
from .basic import elementwise as ops
from .basic import reductions as red
from .basic.inplace import apply_inplace
from .common import broadcast_shapes, new, result_dtype, wrap_dim, zeros_like
from .losses import REDUCTIONS

EPSILON = 1e-12   # Loss.cpp's


def _clamp_min_(t: Tensor, bound: float) -> Tensor:
    """C++'s in-place clamp_min_ on a temporary: ClampMinBackward0 saves a clone of it (the
    value before the write), and the result's version is 1."""
    with no_grad():
        r = piecewise.clamp_min(t, bound)
    return apply_inplace(t, piecewise.CLAMP_MIN, r, [], min=bound)


def _reduction(reduction: str) -> str:
    """torch/nn/_reduction.py get_enum's check."""
    if reduction not in REDUCTIONS:
        raise ValueError(messages.invalid_reduction(reduction))
    return reduction


def apply_reduction(t: Tensor, reduction: str) -> Tensor:
    """Loss.cpp's apply_loss_reduction."""
    if reduction == "mean":
        return moments.mean(t)
    return red.sum(t) if reduction == "sum" else t


def _where_target(target: Tensor, test: Any, a: Tensor, b: Tensor) -> Tensor:
    """where(test(target), a, b): the condition a bool tensor, no edge."""
    cond = new(test(target._data), dtypes.bool_, target.device)
    return comparisons.where(cond, a, b)


# ---- ATen's losses (Loss.cpp) --------------------------------------------------------------

def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """(-target * (input1 - input2) + margin).clamp_min_(0), reduced."""
    _reduction(reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(messages.margin_ranking_dims(input1.size(), input2.size(),
                                                        target.size()))
    diff = ops.sub(input1, input2)   # (C++ evaluates an operator's right operand first)
    prod = ops.mul(ops.neg(target), diff)
    return apply_reduction(_clamp_min_(ops.add_scalar(prod, margin), 0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """where(target != 1, (margin - self).clamp_min_(0), 0)
    + where(target != -1, self, 0), reduced."""
    _reduction(reduction)
    zeros = zeros_like(input)
    # C++'s `margin - self`: empty_like(self).fill_(margin).sub_(self)
    filled = new(np.full_like(input._data, margin), input.dtype, input.device)
    margin_clamp = _clamp_min_(ops.sub(filled, input), 0)
    output_margin = _where_target(target, lambda t: t != 1, margin_clamp, zeros)
    output_self = _where_target(target, lambda t: t != -1, input, zeros)
    return apply_reduction(ops.add(output_margin, output_self), reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """cos = sum(x1 * x2) / sqrt((sum(x1^2) + EPS) * (sum(x2^2) + EPS)) over the target's
    dim; where(target == 1, 1 - cos, 0) + where(target == -1, (cos - margin).clamp_min_(0),
    0), reduced."""
    _reduction(reduction)
    d = target.ndim
    if d not in (0, 1):
        raise RuntimeError(messages.COSINE_EMBEDDING_TARGET)
    if d == 1 and not (input1.ndim == 2 and input2.ndim == 2):
        raise RuntimeError(messages.cosine_embedding_sizes(1, input1.size(), input2.size()))
    if d == 0 and not (input1.ndim == 1 and input2.ndim == 1):
        raise RuntimeError(messages.cosine_embedding_sizes(0, input1.size(), input2.size()))
    prod_sum = red.sum(ops.mul(input1, input2), d)
    mag_square1 = ops.add_scalar(red.sum(ops.mul(input1, input1), d), EPSILON)
    mag_square2 = ops.add_scalar(red.sum(ops.mul(input2, input2), d), EPSILON)
    denom = inplace_ops.sqrt_(ops.mul(mag_square1, mag_square2))
    cos = ops.div(prod_sum, denom)
    zeros = zeros_like(cos)
    pos = ops.one_minus(cos)
    neg = _clamp_min_(ops.sub_scalar(cos, margin), 0)
    output_pos = _where_target(target, lambda t: t == 1, pos, zeros)
    output_neg = _where_target(target, lambda t: t == -1, neg, zeros)
    return apply_reduction(ops.add(output_pos, output_neg), reduction)


def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """F.kl_div: ATen's kl_div (exp(target) * (target - input), or xlogy(target, target) -
    target * input), 'batchmean' as 'sum' divided by the batch size."""
    if reduction == "mean":
        warnings.warn(messages.KL_DIV_MEAN, UserWarning, stacklevel=3)
    enum = _reduction("sum" if reduction == "batchmean" else reduction)
    if log_target:
        diff = ops.sub(target, input)   # (the right operand first)
        output = ops.mul(ops.exp(target), diff)
    else:
        prod = ops.mul(target, input)
        output = ops.sub(binary_math.xlogy(target, target), prod)
    reduced = apply_reduction(output, enum)
    if reduction == "batchmean" and input.ndim != 0:
        reduced = ops.div(reduced, input.shape[0])
    return reduced


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,
                     full: bool = False, size_average: Any = None, eps: float = 1e-8,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (log_input), else input - target * log(input + eps);
    full: + the Stirling term where target > 1."""
    if reduction not in REDUCTIONS:
        raise ValueError(messages.invalid_reduction(reduction))
    if log_input:
        prod = ops.mul(target, input)   # (the right operand first)
        loss = ops.sub(ops.exp(input), prod)
    else:
        loss = ops.sub(input, ops.mul(target, ops.log(ops.add_scalar(input, eps))))
    if full:
        # target * log(target) - target + 0.5 * log(2 * pi * target)
        # target * log(target) - target + 0.5 * log(2 * pi * target), right operands first
        half_log = ops.mul_scalar(ops.log(ops.mul_scalar(target, 2 * math.pi)), 0.5)
        log_target = ops.log(target)
        stirling = ops.add(ops.sub(ops.mul(target, log_target), target), half_log)
        small = new(target._data <= 1, dtypes.bool_, target.device)
        loss = inplace_ops.add_(loss, indexing.masked_fill(stirling, small, 0))
    return apply_reduction(loss, reduction)


# ---- Python losses (torch/nn/functional.py) ------------------------------------------------

def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """0.5 * (log(var) + (input - target) ** 2 / var) with var a clone clamped to eps
    without grad (var of input's shape but its last dim unsqueezed, or one dim differing)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError(messages.GAUSSIAN_NLL_NEGATIVE_VAR)
        var = ops.mul(var, common_ones_like(input))
    elif bool(np.any(var._data < 0)):
        raise ValueError(messages.GAUSSIAN_NLL_NEGATIVE_VAR)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = views.unsqueeze(var, -1)
        elif not (input.ndim == var.ndim and sum(
                y for x, y in zip(input.shape, var.shape, strict=True) if x != y) == 1):
            raise ValueError(messages.GAUSSIAN_NLL_VAR_SIZE)
    if reduction not in REDUCTIONS:
        raise ValueError(messages.gaussian_nll_reduction(reduction))
    var = copying.clone(var)
    with no_grad():
        piecewise.clamp_(var, min=eps)
    # 0.5 * (...): Tensor.__rmul__, the tensor first
    loss = ops.mul(ops.add(ops.log(var), ops.div(powers.pow(ops.sub(input, target), 2), var)),
                   0.5)
    if full:
        loss = inplace_ops.add_(loss, 0.5 * math.log(2 * math.pi))
    return apply_reduction(loss, reduction)


def common_ones_like(t: Tensor) -> Tensor:
    return new(np.ones_like(t._data), t.dtype, t.device)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """-(target * logsigmoid(input) + (1 - target) * logsigmoid(-input)) (times weight),
    summed over the class dim and divided by its size, reduced."""
    loss = ops.neg(ops.add(ops.mul(target, activations.logsigmoid(input)),
                           ops.mul(ops.rsub(target, 1), activations.logsigmoid(ops.neg(input)))))
    if weight is not None:
        loss = ops.mul(loss, weight)
    class_dim = input.ndim - 1
    loss = ops.div(red.sum(loss, class_dim), input.shape[class_dim])
    if reduction not in REDUCTIONS:
        raise ValueError(messages.gaussian_nll_reduction(reduction))
    return apply_reduction(loss, reduction)


# ---- normalize and distances ---------------------------------------------------------------

def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)."""
    if out is not None:
        raise NotImplementedError(messages.NORMALIZE_OUT_NOT_MODELLED)
    nrm = norms.norm(input, p, dim, True)
    denom = shape_views.expand_as(piecewise.clamp_min(nrm, eps), input)
    return ops.div(input, denom)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Distance.cpp: both broadcast, each divided by its norm over dim (a clone clamped to
    eps without grad), multiplied and summed over dim."""
    dt = result_dtype([x1, x2])
    if not dt.is_floating_point:
        raise RuntimeError(messages.cosine_similarity_dtype(dt))
    if eps < 0:
        raise RuntimeError(messages.cosine_similarity_eps(eps))
    shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    a = x1 if tuple(x1.shape) == shape else shape_views.broadcast_to(x1, shape)
    b = x2 if tuple(x2.shape) == shape else shape_views.broadcast_to(x2, shape)
    d = wrap_dim(dim, len(shape))
    a_norm = copying.clone(norms.vector_norm(a, 2, d, True))
    b_norm = copying.clone(norms.vector_norm(b, 2, d, True))
    with no_grad():
        for n in (a_norm, b_norm):
            _clamp_min_(n, eps)
    b_scaled = ops.div(b, b_norm)   # (the right operand first)
    return red.sum(ops.mul(ops.div(a, a_norm), b_scaled), d)


NORM1 = OpSpec(
    "NormBackward1", ("self",), {"self": ("self", "result")},
    lambda c, g: [norms.norm_backward(g, c.self, c.p, c.result, c.dim, c.keepdim)],
    jvp=lambda c: norms.norm_jvp(c.self, c.self_t, c.p, c.result, c.dim, c.keepdim))


def _norm_dim(self: Tensor, p: float, dim: int, keepdim: bool) -> Tensor:
    """at::norm(self, p, dim, keepdim) (norm.ScalarOpt_dim: NormBackward1)."""
    d = wrap_dim(dim, self.ndim) if self.ndim else 0
    dims = (d,) if self.ndim else ()
    arr = norms.vector_norm_array(self._data, float(p), dims or None, keepdim)
    out = new(np.asarray(arr), self.dtype, self.device)
    return record(NORM1, out, [self], p=float(p), dim=dims, keepdim=keepdim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """Distance.cpp: norm(x1 - x2 + eps, p, innermost dim, keepdim)."""
    innermost = max(x1.ndim, x2.ndim) - 1
    return _norm_dim(ops.add_scalar(ops.sub(x1, x2), eps), p, innermost, keepdim)
