"""F.embedding_bag: torch's Python checks, then ATen's _embedding_bag (EmbeddingBag.cpp),
one EmbeddingBagBackward0 node over (weight, per_sample_weights) that saves what
derivatives.yaml's two formulas read: indices, offsets, per_sample_weights, weight (for the
per-sample weights' grad only) and the three extra outputs, offset2bag, bag_size and
max_indices, with ATen's values (bag_size and max_indices are zeros per bag in sum mode; in
mean mode max_indices is bag_size again; padding_idx's entries are not counted; a float32
sum without padding_idx, fbgemm's fast path, saves offset2bag empty).

The grads are computed in NumPy as ATen's dense backward does (a mean bag's rows scaled by
the reciprocal of its size). OpInfo supports no double backward nor forward mode here, and
neither is modelled: a create_graph grad is a plain tensor, where torch's weight grad has an
EmbeddingBagBackwardBackward0 node and its per-sample weights' grad a NotImplemented one.
max_norm (an in-place renorm of weight), scale_grad_by_freq and sparse are not modelled
(NotImplementedError)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common
from .basic import views
from .common import new

_MODES = ("sum", "mean", "max")


def _backward(c: Any, g: Tensor) -> list[Tensor | None]:
    return c.grads(lambda: _weight_grad(c, g), lambda: _per_sample_weights_grad(c, g))


EMBEDDING_BAG = OpSpec(
    "EmbeddingBagBackward0", ("weight", "per_sample_weights"),
    {"weight": ("indices", "offsets", "result1", "result2", "result3", "per_sample_weights"),
     "per_sample_weights": ("weight", "indices", "offsets", "result1")},
    _backward, saved_outputs=("result1", "result2", "result3"),
    save_order=("indices", "offsets", "per_sample_weights", "weight"),
    # derivatives.yaml's _embedding_bag has no forward formula
    jvp=common.no_jvp("_embedding_bag"))


def _kept(indices: np.ndarray, padding_idx: int) -> np.ndarray:
    return indices != padding_idx


def _weight_grad(c: Any, g: Tensor) -> Tensor:
    """_embedding_bag_dense_backward: each index's row gets its bag's grad (times its
    per-sample weight, or the reciprocal of a mean bag's size); max mode, each feature's
    grad to the row that was the maximum."""
    grad = g._data
    out = np.zeros((c.num_weights, grad.shape[1]), grad.dtype)
    idx, bags = c.indices._data, _offset2bag(c)
    if c.mode == 2:
        # the non-empty bags' grads, each feature's to its maximum's row, in bag order
        nonempty = c.result2._data > 0
        mi = c.result3._data[nonempty]
        np.add.at(out, (mi, np.broadcast_to(np.arange(grad.shape[1]), mi.shape)),
                  grad[nonempty])
        return new(out, g.dtype, g.device)
    keep = _kept(idx, c.padding_idx)
    rows = grad[bags[keep]]
    if c.mode == 1:
        sizes = c.result2._data[bags[keep]]
        rows = rows * (1 / np.maximum(sizes, 1).astype(grad.dtype))[:, None]
    elif c.weighted:
        rows = rows * c.per_sample_weights._data[keep][:, None]
    np.add.at(out, idx[keep], rows)
    return new(out, g.dtype, g.device)


def _per_sample_weights_grad(c: Any, g: Tensor) -> Tensor:
    """_embedding_bag_per_sample_weights_backward: the dot of each index's bag grad with its
    weight row, zero at padding_idx."""
    idx, bags = c.indices._data, _offset2bag(c)
    dots = np.einsum("ij,ij->i", g._data[bags], c.weight._data[idx])
    return new(np.where(_kept(idx, c.padding_idx), dots, 0), g.dtype, g.device)


def _offset2bag(c: Any) -> np.ndarray:
    """The saved offset2bag, or, where the forward's fast path left it empty, made again from
    the offsets (as ATen's backward does)."""
    if c.result1.numel() or not c.indices.numel():
        return np.asarray(c.result1._data)
    return _bags(c.indices._data, c.offsets._data, c.include_last_offset)[1]


def _fast_path(weight: Tensor, psw: Tensor | None, padding_idx: int) -> bool:
    """is_fast_path (EmbeddingBag.cpp; its bfloat16 the engine has not): a sum over float rows
    without padding_idx, which fbgemm computes without offset2bag (saved empty)."""
    fast = weight.dtype in (dtypes.float32, dtypes.float16) and \
        weight.stride()[1] == 1 and padding_idx < 0
    return fast and (psw is None or (psw.dtype == weight.dtype and psw.stride()[0] == 1))


def _bags(indices: np.ndarray, offsets: np.ndarray, include_last_offset: bool
          ) -> tuple[int, np.ndarray]:
    """The number of bags and offset2bag: the bag of each index."""
    count = len(offsets) - 1 if include_last_offset else len(offsets)
    starts = offsets[:count]
    bags = np.searchsorted(starts, np.arange(len(indices)), side="right") - 1
    return count, np.maximum(bags, 0).astype(np.int64)


def _forward(weight: Tensor, indices: np.ndarray, offsets: np.ndarray, mode: int,
             psw: Tensor | None, include_last_offset: bool, padding_idx: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    w = weight._data
    count, bags = _bags(indices, offsets, include_last_offset)
    keep = _kept(indices, padding_idx)
    out = np.zeros((count, w.shape[1]), w.dtype)
    sizes = np.bincount(bags[keep], minlength=count).astype(np.int64)
    if mode == 2:
        # ATen's loop (embedding_bag_cpu_max_out): per feature, the first row of a bag, then
        # a strictly greater one (the first maximum in index order)
        max_indices = np.zeros((count, w.shape[1]), np.int64)
        seen = np.zeros(count, bool)
        for i in np.nonzero(keep)[0]:
            b, row = bags[i], w[indices[i]]
            better = row > out[b] if seen[b] else np.ones(row.shape, bool)
            seen[b] = True
            out[b] = np.where(better, row, out[b])
            max_indices[b] = np.where(better, indices[i], max_indices[b])
        return out, bags, sizes, max_indices
    rows = w[indices[keep]]
    if psw is not None:
        rows = rows * psw._data[keep][:, None]
    np.add.at(out, bags[keep], rows)
    if mode == 1:
        out = out / np.maximum(sizes, 1).astype(w.dtype)[:, None]
        return out, bags, sizes, sizes.copy()
    zeros = np.zeros(count, np.int64)
    return out, bags, zeros, zeros.copy()


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """torch/nn/functional.py embedding_bag: its checks in its order, then _embedding_bag."""
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(messages.embedding_bag_psw_shape(list(per_sample_weights.shape),
                                                          list(input.shape)))
    if weight.ndim != 2:
        raise ValueError(messages.embedding_bag_weight_dims(weight.ndim))
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(messages.embedding_bag_2d_offsets(type(offsets)))
        # F's arange and reshapes: the saved indices are a view of the input (and the
        # per-sample weights' reshape a node of the graph)
        step = input.shape[1] if input.shape[1] else 1
        offsets = new(np.arange(0, input.numel(), step, dtype=np.int64), input.dtype,
                      input.device)
        include_last_offset = False
        input = views.reshape(input, (-1,))
        if per_sample_weights is not None:
            per_sample_weights = views.reshape(per_sample_weights, (-1,))
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError(messages.EMBEDDING_BAG_OFFSETS_NONE)
        if offsets.ndim != 1:
            raise ValueError(messages.EMBEDDING_BAG_OFFSETS_1D)
    else:
        raise ValueError(messages.embedding_bag_input_dims(input.ndim))
    if mode not in _MODES:
        raise ValueError(messages.EMBEDDING_BAG_MODE)
    enum = _MODES.index(mode)
    if enum == 2 and scale_grad_by_freq:
        raise ValueError(messages.EMBEDDING_BAG_MAX_SCALE)
    if enum == 2 and sparse:
        raise ValueError(messages.EMBEDDING_BAG_MAX_SPARSE)
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError(messages.EMBEDDING_BAG_NOT_MODELLED)
    if per_sample_weights is not None and enum != 0:
        raise NotImplementedError(messages.embedding_bag_psw_mode(mode))
    # padding_idx as ATen normalises it (-1 where none is given)
    pad = -1 if padding_idx is None else padding_idx % weight.shape[0]
    out, bags, sizes, max_indices = _forward(
        weight, input._data.astype(np.int64), offsets._data.astype(np.int64), enum,
        per_sample_weights, include_last_offset, pad)
    i64 = dtypes.int64
    if enum == 0 and _fast_path(weight, per_sample_weights, pad):
        bags = np.zeros(0, np.int64)
    return record(EMBEDDING_BAG, new(out, weight.dtype, weight.device),
                  [weight, per_sample_weights], indices=input, offsets=offsets,
                  result1=new(bags, i64, weight.device), result2=new(sizes, i64, weight.device),
                  result3=new(max_indices, i64, weight.device), mode=enum, padding_idx=pad,
                  num_weights=weight.shape[0], weighted=per_sample_weights is not None,
                  include_last_offset=include_last_offset)
