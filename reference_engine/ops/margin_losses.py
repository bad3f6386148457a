"""nn.functional's margin losses: multi_margin_loss and multilabel_margin_loss (ATen's
LossMultiMargin.cpp and LossMultiLabelMargin.cpp, each its own node, MultiMarginLossBackward0
and MultilabelMarginLossBackward0), triplet_margin_loss (Loss.cpp, a composite of
pairwise distances, so its graph names torch's nodes) and F's Python
triplet_margin_with_distance_loss over any distance.

The two kernels' backward ops (multi_margin_loss_backward, multilabel_margin_loss_backward)
have no derivatives.yaml entry: torch records a NotImplemented node for their result, whose
backward raises "derivative for aten::<op> is not implemented", and neither loss has a
forward-mode formula."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import extremes, loss_composites, piecewise
from .basic import elementwise as ops
from .common import new
from .losses import REDUCTIONS

_MEAN, _NONE = REDUCTIONS.index("mean"), REDUCTIONS.index("none")


def _reduction(reduction: str) -> int:
    """torch/nn/_reduction.py get_enum: 0 none, 1 mean, 2 sum."""
    if reduction not in REDUCTIONS:
        raise ValueError(messages.invalid_reduction(reduction))
    return REDUCTIONS.index(reduction)


def _no_formula(name: str) -> Any:
    def jvp(c: Any) -> Tensor:
        raise NotImplementedError(messages.fwad_no_formula(name))
    return jvp


def _not_implemented(name: str) -> OpSpec:
    """The node torch's fallback records for an op without a derivatives.yaml entry."""
    def backward(c: Any, g: Tensor) -> list[Tensor | None]:
        raise RuntimeError(messages.no_derivative_for(name))
    return OpSpec("NotImplemented", ("grad", "self"), {}, backward, jvp=_no_formula(name))


MULTI_MARGIN_BACKWARD = _not_implemented("aten::multi_margin_loss_backward")
MULTILABEL_MARGIN_BACKWARD = _not_implemented("aten::multilabel_margin_loss_backward")


def _frames(input: Tensor) -> tuple[int, int]:
    """(nframe, dim), after the kernels' common input check."""
    n = input.ndim
    if not ((n == 2 and input.shape[1] != 0) or (n == 1 and input.shape[0] != 0) or n == 0):
        raise RuntimeError(messages.margin_loss_input(list(input.shape)))
    return (1, 1 if n == 0 else input.shape[0]) if n <= 1 else (input.shape[0], input.shape[1])


def _long(target: Tensor) -> None:
    if target.dtype != dtypes.int64:
        raise RuntimeError(messages.bmm_dtypes("Long", target.dtype.scalar_name))


def _sequential(a: np.ndarray) -> np.ndarray:
    """The sum over the last axis in the kernel's order (a running sum: cumsum's)."""
    return np.cumsum(a, axis=-1)[..., -1] if a.shape[-1] else np.zeros(a.shape[:-1], a.dtype)


def _scaled(grad_input: np.ndarray, grad: Tensor, per_frame: bool) -> np.ndarray:
    """The kernels' last step: times grad_output, a scalar or one per frame."""
    g = grad._data
    return grad_input * (g.reshape(-1, 1) if per_frame else g.reshape(()))


# ---- multi_margin_loss --------------------------------------------------------------------

def _multi_margin_terms(x: np.ndarray, y: np.ndarray, p: int, margin: float,
                        w: np.ndarray | None) -> np.ndarray:
    """Per frame and class, the z = margin - x[y] + x[d] the kernel tests (0 at d = y)."""
    rows = np.arange(x.shape[0])
    z = (x.dtype.type(margin) - x[rows, y][:, None]) + x
    z[rows, y] = 0
    return z


def _weighted(z: np.ndarray, h: Any, weight: Tensor | None, y: np.ndarray) -> np.ndarray:
    """h times the target's weight where the hinge counts (z > 0), exactly 0. elsewhere: the
    kernel skips those terms (a -0. from 0 * a negative weight would show in signs)."""
    if weight is not None:
        h = h * weight._data[y][:, None]
    return np.where(z > 0, h, 0).astype(z.dtype)


def _multi_margin_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    x, y = c.self._data.reshape(c.nframe, c.dim), c.target._data.reshape(-1)
    z = _multi_margin_terms(x, y, c.p, c.margin, None)
    scale = x.dtype.type(1.0 / (c.nframe * c.dim) if c.reduction == _MEAN else 1.0 / c.dim)
    h = _weighted(z, scale if c.p == 1 else 2 * scale * z, c.weight, y)
    rows = np.arange(c.nframe)
    h[rows, y] = 0 - _sequential(h)   # the kernel's 0 -= h_d (a +0. when no hinge counts)
    per_frame = c.reduction == _NONE and g.ndim > 0
    out = _scaled(h, g, per_frame).reshape(c.self.shape)
    grad_input = new(out, c.self.dtype, c.self.device)
    return [record(MULTI_MARGIN_BACKWARD, grad_input, [g, c.self])]


# one edge, self's: target and weight are saved attributes (torch's node has no edge for them)
MULTI_MARGIN = OpSpec("MultiMarginLossBackward0", ("self",),
                      {"self": ("self", "target", "weight")}, _multi_margin_backward,
                      jvp=_no_formula("multi_margin_loss"))


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: Any = None,
                      reduce: Any = None, reduction: str = "mean") -> Tensor:
    enum = _reduction(reduction)
    if p not in (1, 2):
        raise ValueError(messages.MULTI_MARGIN_P)
    if weight is not None and weight.ndim != 1:
        raise ValueError(messages.MARGIN_WEIGHT_DIM)
    nframe, dim = _frames(input)
    if not (target.ndim <= 1 and target.numel() == nframe):
        raise RuntimeError(messages.multi_margin_target(nframe, list(target.shape),
                                                        list(input.shape)))
    if weight is not None and not (weight.ndim <= 1 and weight.numel() == dim):
        raise RuntimeError(messages.margin_weight_size(dim, list(weight.shape)))
    _long(target)
    x, y = input._data.reshape(nframe, dim), target._data.reshape(-1)
    z = _multi_margin_terms(x, y, p, margin, None)
    h = _weighted(z, z if p == 1 else z * z, weight, y)
    frames = _sequential(h) / x.dtype.type(dim)
    if enum == _NONE and target.ndim > 0:
        out = frames
    else:   # accumulated in double (acc_type), then the input's dtype
        total = _sequential(frames.astype(np.float64))
        out = np.asarray(total / nframe if enum == _MEAN else total)
    return record(MULTI_MARGIN, new(out.astype(x.dtype), input.dtype, input.device),
                  [input], target=target, weight=weight, p=p, margin=margin, reduction=enum,
                  nframe=nframe, dim=dim)


# ---- multilabel_margin_loss ---------------------------------------------------------------

def _targets(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per frame: which targets count (those before the first negative one), and is_target
    (1 at each class named by a counted target)."""
    counted = np.cumprod(y >= 0, axis=-1).astype(bool)
    is_target = np.zeros(y.shape)
    for t in range(y.shape[0]):
        is_target[t, y[t][counted[t]]] = 1
    return counted, is_target


def _multilabel_hinges(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """z[t, j, d] = 1 - x[t, y[t, j]] + x[t, d] for counted targets j and non-target d, and
    whether it is a hinge that counts (z > 0)."""
    counted, is_target = _targets(y)
    rows = np.arange(x.shape[0])[:, None]
    z = (1 - x[rows, np.where(counted, y, 0)])[:, :, None] + x[:, None, :]
    active = counted[:, :, None] & (is_target[:, None, :] == 0) & (z > 0)
    return z, active


def _multilabel_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    x, y = c.self._data.reshape(c.nframe, c.dim), c.target._data.reshape(c.nframe, c.dim)
    _, active = _multilabel_hinges(x, y)
    scale = x.dtype.type(1.0 / (c.nframe * c.dim) if c.reduction == _MEAN else 1.0 / c.dim)
    grad = np.zeros_like(x)
    counted, _ = _targets(y)
    rows = np.arange(c.nframe)[:, None]
    np.add.at(grad, (np.broadcast_to(rows, y.shape), np.where(counted, y, 0)),
              -scale * active.sum(-1))
    grad += scale * active.sum(1)
    per_frame = c.reduction == _NONE and g.ndim > 0
    out = _scaled(grad, g, per_frame).reshape(c.self.shape)
    grad_input = new(out, c.self.dtype, c.self.device)
    return [record(MULTILABEL_MARGIN_BACKWARD, grad_input, [g, c.self])]


MULTILABEL_MARGIN = OpSpec("MultilabelMarginLossBackward0", ("self",),
                           {"self": ("self", "target", "is_target")}, _multilabel_backward,
                           jvp=_no_formula("multilabel_margin_loss_forward"),
                           saved_outputs=("is_target",))


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    enum = _reduction(reduction)
    nframe, dim = _frames(input)
    fits = (target.ndim <= 1 and target.numel() == dim) if input.ndim <= 1 else \
        (target.ndim == 2 and tuple(target.shape) == (nframe, dim))
    if not fits:
        raise RuntimeError(messages.multilabel_target(list(target.shape), list(input.shape)))
    _long(target)
    x, y = input._data.reshape(nframe, dim), target._data.reshape(nframe, dim)
    z, active = _multilabel_hinges(x, y)
    # the kernel sums each frame's hinges in double (acc_type), then divides by dim
    frames = np.where(active, z, 0).astype(np.float64).sum((1, 2)) / dim
    if enum == _NONE and target.ndim > 1:
        out = frames
    else:
        out = np.asarray(frames.sum() / nframe if enum == _MEAN else frames.sum())
    is_target = new(_targets(y)[1].reshape(target.shape), input.dtype, input.device)
    return record(MULTILABEL_MARGIN, new(out.astype(x.dtype), input.dtype, input.device),
                  [input], target=target, is_target=is_target, reduction=enum, nframe=nframe,
                  dim=dim)


# ---- triplet_margin_loss ------------------------------------------------------------------

def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """F's checks, then Loss.cpp: clamp_min(margin + d(a, p) - d(a, n), 0), d(a, n) the
    minimum with d(p, n) under swap, reduced."""
    enum = _reduction(reduction)
    if margin <= 0:
        raise ValueError(messages.triplet_margin(margin))
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError(messages.triplet_dims(*dims))
    dist_pos = loss_composites.pairwise_distance(anchor, positive, p, eps)
    dist_neg = loss_composites.pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_swap = loss_composites.pairwise_distance(positive, negative, p, eps)
        dist_neg = extremes.minimum(dist_neg, dist_swap)
    # `margin + dist_pos` is C++'s Scalar + Tensor: dist_pos.add(margin), AddBackward1
    output = piecewise.clamp_min(ops.sub(ops.add_scalar(dist_pos, margin), dist_neg), 0)
    return loss_composites.apply_reduction(output, REDUCTIONS[enum])


# ---- triplet_margin_with_distance_loss (h30ops) --------------------------------------------

def triplet_margin_with_distance_loss(
        anchor: Tensor, positive: Tensor, negative: Tensor, *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """F.triplet_margin_with_distance_loss: torch's Python function, step by step (its checks
    in its order; the distance any callable, pairwise_distance by default). It is Python, not
    Loss.cpp: `margin + dist_pos` is Python's float + Tensor, Tensor.__radd__ (AddBackward0,
    where triplet_margin_loss's C++ Scalar + Tensor is AddBackward1)."""
    if reduction not in REDUCTIONS:
        raise ValueError(messages.invalid_reduction(reduction))
    if margin <= 0:
        raise ValueError(messages.triplet_margin(margin))
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError(messages.triplet_dims(*dims))
    distance = loss_composites.pairwise_distance if distance_function is None \
        else distance_function
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = extremes.minimum(dist_neg, distance(positive, negative))
    loss = piecewise.clamp_min(margin + dist_pos - dist_neg, 0)
    return loss_composites.apply_reduction(loss, reduction)
