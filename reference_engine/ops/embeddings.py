"""nn.functional.embedding (ATen's embedding: EmbeddingBackward0, its grad the dense
embedding backward written in engine ops) and nn.functional.one_hot (no grad)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, linear_forward, record
from ..tensor import Tensor
from .basic import comparisons, indexing, views
from .basic import elementwise as ops
from .common import new, written_in_place


def _embedding_backward(c: Any, g: Tensor) -> Tensor:
    """embedding_dense_backward: grad's rows (a padding index's left out, each divided by
    its index's count when scale_grad_by_freq) added into zeros at their indices."""
    idx = c.indices._data.reshape(-1).astype(np.int64)
    rows = views.reshape(g, (idx.size, g.shape[-1]) if g.ndim else (1, 1))
    if c.padding_idx >= 0:
        keep = new((idx != c.padding_idx)[:, None], dtypes.bool_, g.device)
        rows = comparisons.where(keep, rows, new(np.zeros((), g.dtype.np), g.dtype, g.device))
    if c.scale_grad_by_freq:
        counts = np.bincount(idx, minlength=c.num_weights)[idx].astype(g.dtype.np)
        rows = ops.div(rows, new(counts[:, None], g.dtype, g.device))
    zeros = new(np.zeros((c.num_weights, rows.shape[1]), g.dtype.np), g.dtype, g.device)
    return indexing.index_add(zeros, 0, new(idx, dtypes.int64, g.device), rows)


EMBEDDING = OpSpec("EmbeddingBackward0", ("weight",), {"weight": ("indices",)},
                   lambda c, g: [_embedding_backward(c, g)], jvp="auto_linear")


@linear_forward(EMBEDDING)
def _embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
               scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """torch.embedding: weight's rows at indices (index_select of the flattened indices,
    viewed to indices' shape + the embedding dim)."""
    if weight.ndim != 2:
        raise RuntimeError(messages.EMBEDDING_WEIGHT_DIMS)
    if sparse:
        raise NotImplementedError(messages.EMBEDDING_SPARSE_NOT_MODELLED)
    idx = indices._data.astype(np.int64)
    arr = weight._data[idx.reshape(-1)].reshape((*idx.shape, weight.shape[1]))
    out = new(arr, weight.dtype, weight.device)
    return record(EMBEDDING, out, [weight], indices=indices, num_weights=weight.shape[0],
                  padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """F.embedding: padding_idx checked and made non-negative, then torch.embedding."""
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= weight.shape[0]:
            raise AssertionError(messages.EMBEDDING_PADDING_IDX)
        if padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError(messages.EMBEDDING_PADDING_IDX)
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        raise NotImplementedError(messages.EMBEDDING_MAX_NORM_NOT_MODELLED)
    return _embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Int64 one-hot rows (num_classes -1: the largest index + 1)."""
    if tensor.dtype is not dtypes.int64:
        raise RuntimeError(messages.ONE_HOT_DTYPE)
    idx = tensor._data
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError(messages.ONE_HOT_EMPTY)
        num_classes = int(idx.max()) + 1
    if idx.size and idx.min() < 0:
        raise RuntimeError(messages.ONE_HOT_NEGATIVE)
    if idx.size and idx.max() >= num_classes:
        raise RuntimeError(messages.ONE_HOT_TOO_SMALL)
    arr = (idx[..., None] == np.arange(num_classes)).astype(np.int64)
    out = new(arr, dtypes.int64, tensor.device)
    # ATen's one_hot (Onehot.cpp) is composite: at::zeros, whose zero_ is not below the
    # ADInplaceOrView key as torch.zeros' is from Python, then scatter_: two in-place
    # writes, _version 2. An empty input's result is at::empty (_version 0).
    return written_in_place(out, 2) if arr.size else out
