"""Joining tensors: cat and stack (their backward slices or selects the grad apart)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from .basic import views
from .common import common_device, new, result_dtype, wrap_dim
from .out_overloads import into_out

CAT = OpSpec("CatBackward0", ("tensors",),
             # cat_tensors_backward: a skipped (legacy empty 1-d) input's grad is zeros([0])
             backward=lambda c, g: [views.slice(g, c.dim, start, start + size)
                                    if start is not None else new(np.zeros(0), g.dtype, g.device)
                                    for start, size in c.pieces],
             jvp=lambda c: cat(c.tangents, c.dim))   # cat_jvp
STACK = OpSpec("StackBackward0", ("tensors",),
               backward=lambda c, g: [views.select(g, c.dim, i) for i in range(c.count)],
               jvp=lambda c: stack(c.tangents, c.dim))   # stack_jvp


def _skipped(t: Tensor) -> bool:
    """ATen's cat_should_skip_tensor: a legacy empty tensor (1-d, size 0) joins any cat."""
    return t.ndim == 1 and t.shape[0] == 0


def cat(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """torch.cat: the argument parser's checks, then cat_meta's, in their order."""
    if isinstance(tensors, Tensor):
        raise TypeError(messages.cat_not_tensors(type(tensors).__name__))
    ts = list(tensors)
    if not ts:
        raise ValueError(messages.CAT_EMPTY)
    for i, t in enumerate(ts):
        if not isinstance(t, Tensor):
            raise TypeError(messages.tensor_list_element(i, type(t).__name__))
    for i, t in enumerate(ts):
        if t.ndim == 0:
            raise RuntimeError(messages.cat_zero_dim(i))
    kept = [t for t in ts if not _skipped(t)]
    first = kept[0] if kept else ts[0]
    d = wrap_dim(dim, first.ndim)
    for i, t in enumerate(ts):
        if _skipped(t) and kept:
            continue
        if t.ndim != first.ndim:
            raise RuntimeError(messages.cat_ndims(first.ndim, t.ndim))
        for k in range(first.ndim):
            if k != d and t.shape[k] != first.shape[k]:
                raise RuntimeError(messages.cat_sizes(d, first.shape[k], t.shape[k], i))
    if out is not None:
        # assert_no_overlap: the same tensor overlaps itself even with no elements
        if any(out is t or np.shares_memory(out._data, t._data) for t in ts):
            raise RuntimeError(messages.PARTIAL_OVERLAP)
        return into_out("cat", out, ts, lambda: cat(ts, dim))
    dt = result_dtype(ts)
    joined = kept if kept else ts
    data = np.concatenate([t._data.astype(dt.np) for t in joined], axis=d)
    result = new(data, dt, common_device(ts))
    pieces: list[tuple[int | None, int]] = []
    start = 0
    for t in ts:
        if _skipped(t) and kept:
            pieces.append((None, 0))
            continue
        pieces.append((start, t.shape[d]))
        start += t.shape[d]
    return record(CAT, result, ts, dim=d, pieces=pieces)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    ts = list(tensors)
    d = wrap_dim(dim, ts[0].ndim + 1)
    dt = result_dtype(ts)
    out = new(np.stack([t._data.astype(dt.np) for t in ts], axis=d), dt, common_device(ts))
    return record(STACK, out, ts, dim=d, count=len(ts))
