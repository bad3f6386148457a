"""Pairwise distances: torch.cdist (ATen's _cdist_forward, or for p = 2 with matrix products
its composite _euclidean_dist) and torch.pdist / F.pdist (_pdist_forward), after
Distance.cpp and the CPU kernels of DistanceOpsKernel.cpp.

The p-norm of each pair's difference and its derivative follow the kernels' cases: p = 0
counts the non-zero differences (no gradient), p = 1, 0 < p < 2, p = 2, inf and a general p
each have their own formula. The backward kernels (_cdist_backward, _pdist_backward) are
not differentiable in torch: their nodes raise "the derivative for ... is not implemented"."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, linalg, shape_views
from .basic import elementwise as ops
from .basic import inplace, views
from .basic import reductions as red

# ---- the kernels (numpy) ----------------------------------------------------------------


def _norms(diff: np.ndarray, p: float) -> np.ndarray:
    """The p-norm over the last axis of |a - b| (map, reduce, finish of the kernels)."""
    a = np.abs(diff)
    if p == 0:
        return np.minimum(np.ceil(a), 1).sum(-1)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return np.sqrt((a * a).sum(-1))
    if math.isinf(p):
        return a.max(-1, initial=0)
    return np.power(np.power(a, p).sum(-1), 1 / p)


def _norm_grads(diff: np.ndarray, grad: np.ndarray, dist: np.ndarray, p: float) -> np.ndarray:
    """Each pair's gradient with respect to its first vector (the kernels' `backward`);
    grad and dist carry a trailing axis of 1."""
    with np.errstate(all="ignore"):
        if p == 0:
            return np.zeros_like(diff)
        if p == 1:
            return grad * np.sign(diff)
        if p < 2:
            out = (np.sign(diff) * np.power(np.abs(diff), p - 1) * grad
                   / np.power(dist, p - 1))
            return np.where((dist == 0) | ((diff == 0) & (p < 1)), 0, out)
        if p == 2:
            return np.where(dist == 0, 0, grad * diff / dist)
        if math.isinf(p):
            return grad * np.sign(diff) * (np.abs(diff) == dist)
        out = diff * np.power(np.abs(diff), p - 2) * grad / np.power(dist, p - 1)
        return np.where(dist == 0, 0, out)


# ---- cdist ------------------------------------------------------------------------------


def _batch(x1: Tensor, x2: Tensor) -> tuple[int, ...]:
    return common.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))


def _cdist_grad(c: Any, g: Tensor, first: bool) -> Tensor:
    # derivatives.yaml: x1: _cdist_backward(grad.contiguous(), x1, x2, p, result),
    # x2: _cdist_backward(grad.mT().contiguous(), x2, x1, p, result.mT().contiguous())
    if first:
        return cdist_backward(shape_views.contiguous(g), c.x1, c.x2, c.p, c.result)
    mt = shape_views.contiguous(views.transpose(g, -2, -1))
    res = shape_views.contiguous(views.transpose(c.result, -2, -1))
    return cdist_backward(mt, c.x2, c.x1, c.p, res)


CDIST = OpSpec("CdistBackward0", ("x1", "x2"),
               {"x1": ("x1", "x2", "result"), "x2": ("x1", "x2", "result")},
               lambda c, g: c.grads(lambda: _cdist_grad(c, g, True),
                                    lambda: _cdist_grad(c, g, False)),
               jvp=common.no_jvp("_cdist_forward"))


def _not_implemented(name: str) -> OpSpec:
    def backward(c: Any, g: Tensor) -> list[Tensor | None]:
        raise NotImplementedError(messages.derivative_not_implemented(name))
    return OpSpec(f"{''.join(w.title() for w in name.split('_'))}Backward0",
                  ("grad", "x1", "x2", "cdist") if name == "_cdist_backward"
                  else ("grad", "self", "pdist"), {}, backward, jvp=common.no_jvp(name))


CDIST_BACKWARD = _not_implemented("_cdist_backward")   # CdistBackwardBackward0
PDIST_BACKWARD = _not_implemented("_pdist_backward")   # PdistBackwardBackward0


def cdist_backward(grad: Tensor, x1: Tensor, x2: Tensor, p: float, dist: Tensor) -> Tensor:
    """_cdist_backward: the grad of x1, of x1 expanded to the common batch (the engine sums
    it back to x1's shape, as torch's does)."""
    batch = _batch(x1, x2)
    r1, c = x1.shape[-2:]
    r2 = x2.shape[-2]
    if 0 in (r1, r2, c) or math.prod(batch) == 0:
        out = np.zeros(x1.shape, x1.dtype.np)
    else:
        a = np.broadcast_to(x1._data, (*batch, r1, c))
        b = np.broadcast_to(x2._data, (*batch, r2, c))
        diff = a[..., :, None, :] - b[..., None, :, :]
        out = _norm_grads(diff, grad._data.reshape(*batch, r1, r2, 1),
                          dist._data.reshape(*batch, r1, r2, 1), p).sum(-2)
    return record(CDIST_BACKWARD, common.new(out, x1.dtype, x1.device), [grad, x1, x2, dist])


def _cdist_forward(x1: Tensor, x2: Tensor, p: float) -> Tensor:
    batch = _batch(x1, x2)
    r1, r2 = x1.shape[-2], x2.shape[-2]
    a = np.broadcast_to(x1._data, (*batch, *x1.shape[-2:]))
    b = np.broadcast_to(x2._data, (*batch, *x2.shape[-2:]))
    out = _norms(a[..., :, None, :] - b[..., None, :, :], p).reshape(*batch, r1, r2)
    return record(CDIST, common.new(out, x1.dtype, x1.device), [x1, x2], p=p)


def _euclidean_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """_euclidean_dist_backward (FunctionsManual.cpp): ratio = grad / res, 0 where res is 0;
    x1 * ratio.sum(-1, true) - ratio @ x2 and x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT @ x1."""
    zero = common.new(c.result._data == 0, dtypes.bool_, c.result.device)
    ratio = ops.div(g, c.result)
    inplace.masked_fill_(ratio, zero, 0)
    return c.grads(
        lambda: ops.sub(ops.mul(c.x1, red.sum(ratio, -1, True)), linalg.matmul(ratio, c.x2)),
        lambda: ops.sub(ops.mul(c.x2, views.unsqueeze(red.sum(ratio, -2), -1)),
                        linalg.matmul(views.transpose(ratio, -2, -1), c.x1)))


EUCLIDEAN_DIST = OpSpec("EuclideanDistBackward0", ("x1", "x2"),
                        {"x1": ("x1", "x2", "result"), "x2": ("x1", "x2", "result")},
                        _euclidean_backward, jvp=common.no_jvp("_euclidean_dist"))


def _euclidean_dist(x1: Tensor, x2: Tensor) -> Tensor:
    """Distance.cpp's composite, in its order: the rows extended by their squared norms and
    ones, one matrix product, clamped at 0, square-rooted."""
    a, b = x1._data, x2._data
    n1 = (a ** 2).sum(-1, keepdims=True)
    n2 = (b ** 2).sum(-1, keepdims=True)
    a_ = np.concatenate([a * -2, n1, np.ones_like(n1)], -1)
    b_ = np.concatenate([b, np.ones_like(n2), n2], -1)
    out = np.sqrt(np.maximum(a_ @ np.swapaxes(b_, -2, -1), 0))
    return record(EUCLIDEAN_DIST, common.new(out, x1.dtype, x1.device), [x1, x2])


_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
          "donot_use_mm_for_euclid_dist": 2}


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """torch.cdist (torch/functional.py, then Distance.cpp's cdist and cdist_impl)."""
    if compute_mode not in _MODES:
        raise ValueError(messages.cdist_compute_mode(compute_mode))
    mode = _MODES[compute_mode]
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(messages.cdist_dims(name, x.ndim))
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(messages.cdist_columns(x1.shape[-1], x2.shape[-1]))
    if not x1.dtype.is_floating_point:
        raise RuntimeError(messages.cdist_dtype(x1.dtype.scalar_name))
    if p < 0:
        raise RuntimeError(messages.CDIST_NEGATIVE_P)
    r1, r2 = x1.shape[-2], x2.shape[-2]
    mm = p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))
    if x1.numel() == 0 or x2.numel() == 0 or not mm:
        return _cdist_forward(x1, x2, p)
    batch = _batch(x1, x2)
    size = math.prod(batch)
    if size == 1:
        dist = _euclidean_dist(x1, x2)
    else:
        dist = _euclidean_dist(*(_flat_batch(x, batch, size) for x in (x1, x2)))
    return views.view(dist, (*batch, r1, r2))


def _flat_batch(x: Tensor, batch: Sequence[int], size: int) -> Tensor:
    """x.expand(batch + its matrix shape).contiguous().view(size, its matrix shape)."""
    expanded = red.expand(x, (*batch, *x.shape[-2:]))
    return views.view(shape_views.contiguous(expanded), (size, *x.shape[-2:]))


# ---- pdist ------------------------------------------------------------------------------

def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The (i, j), i < j, of pdist's result in its order (rows of the upper triangle)."""
    return np.triu_indices(n, 1)


PDIST = OpSpec("PdistBackward0", ("self",), {"self": ("self", "result")},
               lambda c, g: [pdist_backward(g, c.self, c.p, c.result)],
               jvp=common.no_jvp("_pdist_forward"))


def pdist_backward(grad: Tensor, self: Tensor, p: float, pdist: Tensor) -> Tensor:
    """_pdist_backward: each pair's gradient added to its first row, subtracted from its
    second."""
    n = self.shape[0]
    out = np.zeros(self.shape, self.dtype.np)
    if n > 1 and self.shape[1] > 0:
        i, j = _pairs(n)
        a = self._data
        grads = _norm_grads(a[i] - a[j], grad._data[:, None], pdist._data[:, None], p)
        np.add.at(out, i, grads)
        np.add.at(out, j, -grads)
    return record(PDIST_BACKWARD, common.new(out, self.dtype, self.device),
                  [grad, self, pdist])


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """torch.pdist: Distance.cpp's checks, then _pdist_forward of the contiguous input."""
    if input.ndim != 2:
        raise RuntimeError(messages.pdist_dims(input.ndim))
    if not input.dtype.is_floating_point:
        raise RuntimeError(messages.PDIST_DTYPE)
    if p < 0:
        raise RuntimeError(messages.PDIST_NEGATIVE_P)
    self = shape_views.contiguous(input)
    n, m = self.shape
    if n <= 1:
        out = np.zeros((0,), self.dtype.np)
    elif m == 0:
        out = np.zeros((n * (n - 1) // 2,), self.dtype.np)
    else:
        i, j = _pairs(n)
        out = _norms(self._data[i] - self._data[j], p)
    return record(PDIST, common.new(out, self.dtype, self.device), [self], p=p)

