"""The negative log-likelihood loss and cross entropy: F.nll_loss (ATen's nll_loss_nd over
nll_loss_forward and nll_loss2d_forward, LossNLL.cpp / LossNLL2d.cpp) and F.cross_entropy
(cross_entropy_loss: log_softmax then nll_loss_nd, or the composite of class
probabilities, or the label-smoothing composite), as ATen composes them, so their graphs
are torch's. The kernels' loss and weight sums are their cascade sums, in their order.

The backward is nll_loss_backward (nll_loss2d_backward), an op of its own whose derivative
is nll_loss of the grad for grad_output and zeros for self (derivatives.yaml)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, inplace_ops, masked, shape_views
from .basic import comparisons, indexing, inplace, reductions, views
from .basic import elementwise as ops
from .nn import log_softmax

REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
IGNORE_INDEX = -100


def _enum(reduction: str, size_average: Any, reduce: Any) -> str:
    """torch/nn/_reduction.py: legacy_get_string (with its warning), then get_enum's check."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
        warnings.warn(messages.legacy_reduction(reduction), stacklevel=3)
    if reduction not in REDUCTIONS:
        raise ValueError(messages.invalid_reduction(reduction))
    return reduction


def _cascade(losses: np.ndarray, weights: np.ndarray, kept: np.ndarray
             ) -> tuple[Any, Any]:
    """The kernels' cascade sums over the kept positions (linear index order): the loss
    (each term subtracted) and the weight, in the input's dtype, as ATen adds them."""
    levels = 8
    n = losses.size
    power = max(4, (n - 1).bit_length() // levels)   # CeilLog2(n) / levels, at least 4
    mask = (1 << power) - 1
    zero = losses.dtype.type(0)
    loss_sums, weight_sums = [zero] * levels, [zero] * levels
    for b in range(n):
        if not kept[b]:
            continue
        loss_sums[0] = loss_sums[0] - losses[b]
        weight_sums[0] = weight_sums[0] + weights[b]
        for j in range(levels - 1):
            if b & (mask << (j * power)):
                break
            weight_sums[j + 1] = weight_sums[j + 1] + weight_sums[j]
            loss_sums[j + 1] = loss_sums[j + 1] + loss_sums[j]
            weight_sums[j] = loss_sums[j] = zero
    total_loss, total_weight = zero, zero
    for level in range(levels):
        total_loss = total_loss + loss_sums[level]
        total_weight = total_weight + weight_sums[level]
    return total_loss, total_weight


def _positions(input: Tensor, target: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """input as (N, C, M) and target as (N, M): the kernels' three layouts in one (a 1-d
    input is one sample, a 2-d one M = 1, a 4-d one M = H * W)."""
    x = np.asarray(input._data)
    if x.ndim == 1:
        return x.reshape(1, -1, 1), np.asarray(target._data).reshape(1, 1)
    n, c = x.shape[0], x.shape[1]
    return x.reshape(n, c, -1), np.asarray(target._data).reshape(n, -1)


def _check_targets(t: np.ndarray, kept: np.ndarray, n_classes: int) -> None:
    bad = kept & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(messages.nll_target_out_of_bounds(int(t[bad][0])))


def _nll_forward(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                 ignore_index: int, spatial: bool) -> tuple[np.ndarray, np.ndarray]:
    """nll_loss_out_frame / nll_loss2d_forward_out_frame: (output, total_weight)."""
    x, t = _positions(input, target)
    dt = x.dtype.type
    n_classes = x.shape[1]
    kept = t != ignore_index
    _check_targets(t, kept, n_classes)
    safe = np.where(kept, t, 0)
    w = (np.ones(n_classes, x.dtype) if weight is None
         else np.asarray(weight._data, dtype=x.dtype))
    picked = np.take_along_axis(x, safe[:, None, :], 1)[:, 0, :]
    if reduction == "none" and input.ndim > 1:
        out = np.where(kept, -picked * w[safe], dt(0)).astype(x.dtype)
        return out.reshape(target.shape), np.array(0, x.dtype)
    if t.size == 0:
        return np.array(np.nan if reduction == "mean" else 0, x.dtype), np.array(0, x.dtype)
    flat_w = w[safe].reshape(-1)
    products = (picked.reshape(-1) * flat_w) if weight is not None else picked.reshape(-1)
    loss, weights = _cascade(products.astype(x.dtype), flat_w, kept.reshape(-1))
    if weight is None:
        weights = dt(int(kept.sum()))
    if reduction == "mean":
        with np.errstate(all="ignore"):
            loss = loss / weights
    return np.array(loss, x.dtype), np.array(weights, x.dtype)


def _nll_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    return [nll_loss_backward(g, c.self, c.target, c.weight, c.reduction, c.ignore_index,
                              c.total_weight, c.spatial)]


def _nll_jvp(c: Any) -> Tensor:
    """output: nll_loss_forward(self_t, target, weight, reduction, ignore_index)[0]"""
    return _nll_loss_op(c.self_t, c.target, c.weight, c.reduction, c.ignore_index, c.spatial)


def _nll_spec(node: str) -> OpSpec:
    return OpSpec(node, ("self",), {"self": ("self", "target", "weight", "total_weight")},
                  _nll_backward, saved_outputs=("total_weight",),
                  save_order=("self", "target", "weight"), jvp=_nll_jvp)


NLL_LOSS = _nll_spec("NllLossBackward0")
NLL_LOSS2D = _nll_spec("NllLoss2DBackward0")


def _nll_loss_op(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                 ignore_index: int, spatial: bool) -> Tensor:
    """nll_loss (1-d, 2-d input) or nll_loss2d (4-d): the output of nll_loss_forward."""
    if spatial:
        _check_2d_inputs(input, target, weight)
    else:
        _check_inputs(input, target, weight)
    common.floating_kernel("nll_loss_out_frame" if not spatial
                           else "nll_loss2d_forward_out_frame", input)
    out, total = _nll_forward(input, target, weight, reduction, ignore_index, spatial)
    result = common.new(out, input.dtype, input.device)
    attrs = {"target": target, "weight": weight, "reduction": reduction,
             "ignore_index": ignore_index, "spatial": spatial,
             "total_weight": common.new(total, input.dtype, input.device)}
    return record(NLL_LOSS2D if spatial else NLL_LOSS, result, [input], **attrs)


def _check_inputs(input: Tensor, target: Tensor, weight: Tensor | None) -> None:
    """TORCH_META_FUNC(nll_loss_forward)'s checks."""
    if not 0 < input.ndim <= 2:
        raise RuntimeError(messages.NLL_INPUT_DIMS)
    if target.ndim > 1:
        raise RuntimeError(messages.NLL_TARGET_DIMS)
    # torch 2.13 takes a 1-d input's target as a 0-d or a one-element 1-d tensor
    no_batch_dim = input.ndim == 1 and (target.ndim == 0 or target.numel() == 1)
    if not no_batch_dim and (target.ndim == 0 or input.shape[0] != target.shape[0]):
        raise RuntimeError(messages.nll_size_mismatch(tuple(input.shape), tuple(target.shape)))
    n_classes = input.shape[-1]
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(messages.nll_weight_size(n_classes, tuple(weight.shape)))


def _check_2d_inputs(input: Tensor, target: Tensor, weight: Tensor | None) -> None:
    """LossNLL2d.cpp check_inputs_nll_loss2d."""
    if target.ndim != 3:
        raise RuntimeError(messages.nll2d_target_dims(target.ndim))
    if input.ndim != 4:
        raise RuntimeError(messages.nll2d_input_dims(input.ndim))
    if weight is not None and weight.numel() != input.shape[1]:
        raise RuntimeError(messages.NLL2D_WEIGHT)
    if (input.shape[0], input.shape[2], input.shape[3]) != tuple(target.shape):
        raise RuntimeError(messages.nll2d_size_mismatch(tuple(input.shape),
                                                        tuple(target.shape)))


# ---- nll_loss_backward, nll_loss2d_backward ---------------------------------------------------

def _nll_backward_double(c: Any, g: Tensor) -> list[Tensor | None]:
    """grad_output: nll_loss(grad, target, weight, reduction, ignore_index); self: zeros"""
    return c.grads(
        lambda: _nll_loss_op(g, c.target, c.weight, c.reduction, c.ignore_index, c.spatial),
        lambda: common.zeros_like(g))


def _backward_spec(node: str) -> OpSpec:
    return OpSpec(node, ("grad_output", "self"), {"grad_output": ("target", "weight")},
                  _nll_backward_double,
                  # linear in grad_output: nll_loss_backward(grad_output_t, ...), read alone
                  jvp=lambda c: nll_loss_backward(
                      c.grad_output_t, c.self, c.target, c.weight, c.reduction,
                      c.ignore_index, c.total_weight, c.spatial),
                  jvp_reads=("grad_output",))


NLL_LOSS_BACKWARD = _backward_spec("NllLossBackwardBackward0")
NLL_LOSS2D_BACKWARD = _backward_spec("NllLoss2DBackwardBackward0")


def nll_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                      weight: Tensor | None, reduction: str, ignore_index: int,
                      total_weight: Tensor, spatial: bool = False) -> Tensor:
    """nll_loss_backward_out_frame / nll_loss2d_backward_out_frame: zeros but at each kept
    target, -w * grad_output (no reduction) or w * -(grad_output [/ total_weight])."""
    if self.ndim == 1 and target.ndim == 1 and self.shape[0] != target.shape[0]:
        # nll_loss_backward's meta check is the older one: the one-element target of a 1-d
        # input that the forward takes fails its backward, in torch 2.13
        raise RuntimeError(messages.nll_size_mismatch(tuple(self.shape), tuple(target.shape)))
    x, t = _positions(self, target)
    dt = x.dtype.type
    kept = t != ignore_index
    safe = np.where(kept, t, 0)
    n_classes = x.shape[1]
    w = (np.ones(n_classes, x.dtype) if weight is None
         else np.asarray(weight._data, dtype=x.dtype))
    go = np.asarray(grad_output._data, dtype=x.dtype)
    if reduction == "none" and self.ndim > 1:
        values = -w[safe] * go.reshape(t.shape)
    else:
        scale = go.reshape(()) / np.asarray(total_weight._data) if reduction == "mean" \
            else go.reshape(())
        with np.errstate(all="ignore"):
            grad = -dt(scale)
            values = w[safe] * grad if weight is not None else np.full(t.shape, grad)
    grad_input = np.zeros_like(x)
    rows, cols = np.nonzero(kept)
    grad_input[rows, safe[rows, cols], cols] = values[rows, cols]
    out = common.new(grad_input.reshape(self.shape), self.dtype, self.device)
    return record(NLL_LOSS2D_BACKWARD if spatial else NLL_LOSS_BACKWARD, out,
                  [grad_output, self], target=target, weight=weight, reduction=reduction,
                  ignore_index=ignore_index, total_weight=total_weight, spatial=spatial)


# ---- nll_loss_nd, F.nll_loss ----------------------------------------------------------------

def _nll_loss_nd(self: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                 ignore_index: int) -> Tensor:
    """ATen's nll_loss_nd: 1-d and 2-d inputs to nll_loss, 4-d to nll_loss2d, the others
    viewed as (N, C, 1, -1) for nll_loss2d (its unreduced output viewed back)."""
    if self.ndim < 1:
        raise ValueError(messages.nll_nd_dims(self.ndim))
    if self.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(messages.nll_nd_1d_target(target.shape[0]))
    if self.ndim != 1 and (target.ndim == 0 or self.shape[0] != target.shape[0]):
        raise ValueError(messages.nll_nd_batch(self.shape[0], target.shape[0]
                                               if target.ndim else 0))
    if self.ndim <= 2:
        return _nll_loss_op(self, target, weight, reduction, ignore_index, False)
    if self.ndim == 4:
        return _nll_loss_op(self, target, weight, reduction, ignore_index, True)
    n, c = self.shape[0], self.shape[1]
    out_size = (n, *self.shape[2:])
    if tuple(target.shape[1:]) != tuple(self.shape[2:]):
        raise RuntimeError(messages.nll_nd_target_size(out_size, tuple(target.shape)))
    input_, target_ = shape_views.contiguous(self), shape_views.contiguous(target)
    input_ = views.view(input_, (n, c, 1, -1) if input_.numel() else (n, c, 0, 0))
    target_ = views.view(target_, (n, 1, -1) if target_.numel() else (n, 0, 0))
    out = _nll_loss_op(input_, target_, weight, reduction, ignore_index, True)
    return out if reduction != "none" else views.view(out, out_size)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = IGNORE_INDEX, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    reduction = _enum(reduction, size_average, reduce)
    return _nll_loss_nd(input, target, weight, reduction, ignore_index)


# ---- F.cross_entropy --------------------------------------------------------------------------

def _class_weight(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    """weight viewed to broadcast along the class dim of an ndim-d input."""
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return views.view(weight, tuple(shape))


def _prob_target(self: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                 label_smoothing: float) -> Tensor:
    """cross_entropy_loss_prob_target: -(log_softmax(self) * target [* weight]) reduced,
    the mean over the samples (numel / classes)."""
    class_dim = 0 if self.ndim == 1 else 1
    n_classes = self.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(messages.cross_entropy_weight_size(n_classes, tuple(weight.shape)))
    input = log_softmax(self, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(messages.label_smoothing_range(label_smoothing))
        target = ops.add_scalar(ops.mul_scalar(target, 1 - label_smoothing),
                                label_smoothing / n_classes)
    product = ops.mul(input, target)
    if weight is not None:
        product = ops.mul(product, _class_weight(weight, input.ndim, class_dim))
    if reduction == "none":
        return ops.neg(reductions.sum(product, class_dim))
    total = ops.neg(reductions.sum(product))
    if reduction == "sum":
        return total
    if input.numel() == 0:
        return inplace_ops.fill_(total, float("nan"))
    return ops.div_scalar(total, input.numel() // n_classes)


def _label_smoothing(self: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                     ignore_index: int, label_smoothing: float) -> Tensor:
    """cross_entropy_loss_label_smoothing: (1 - ls) * nll + smooth * (ls / classes)."""
    class_dim = 0 if self.ndim == 1 else 1
    input = log_softmax(self, class_dim)
    nll = _nll_loss_nd(input, target, weight, reduction, ignore_index)
    n_classes = input.shape[class_dim]
    if weight is not None:
        smooth = ops.neg(reductions.sum(ops.mul(input, _class_weight(weight, input.ndim,
                                                                      class_dim)), class_dim))
    else:
        smooth = ops.neg(reductions.sum(input, class_dim))
    ignore_mask = comparisons.compare(target, ignore_index, np.equal)
    smooth = inplace.masked_fill_(smooth, ignore_mask, 0.0)
    if reduction == "mean":
        if weight is not None:
            kept = masked.masked_select(target, comparisons.logical_not(ignore_mask))
            denominator = reductions.sum(indexing.gather(weight, 0, views.flatten(kept)))
        else:
            denominator = reductions.sum(comparisons.logical_not(ignore_mask))
        ret = ops.div(reductions.sum(smooth), denominator)
    elif reduction == "sum":
        ret = reductions.sum(smooth)
    else:
        ret = smooth
    return ops.add(ops.mul_scalar(nll, 1 - label_smoothing),
                   ops.mul_scalar(ret, label_smoothing / n_classes))


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = IGNORE_INDEX,
                  reduce: Any = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """ATen's cross_entropy_loss: class probabilities where target has input's shape."""
    reduction = _enum(reduction, size_average, reduce)
    if tuple(input.shape) == tuple(target.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError(messages.cross_entropy_prob_dtype(target.dtype.scalar_name))
        if ignore_index >= 0:
            raise RuntimeError(messages.CROSS_ENTROPY_PROB_IGNORE)
        return _prob_target(input, target, weight, reduction, label_smoothing)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(messages.label_smoothing_range(label_smoothing))
        return _label_smoothing(input, target, weight, reduction, ignore_index,
                                label_smoothing)
    class_dim = 0 if input.ndim == 1 else 1
    return _nll_loss_nd(log_softmax(input, class_dim), target, weight, reduction,
                        ignore_index)

