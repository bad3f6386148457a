"""put/take (by index into the flattened tensor) and take_along_dim. (put_: ops/scatter.py's
in-place forms.)"""

from __future__ import annotations

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, linear_forward, record
from ..tensor import Tensor
from . import common, out_overloads
from .basic import indexing, reductions, views

# ---- put / take ---------------------------------------------------------------------------------

def _flat_index(self: Tensor, index: Tensor) -> np.ndarray:
    n = self.numel()
    idx = index._data.astype(np.int64)
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(messages.take_out_of_range(int(bad.reshape(-1)[0]), n))
    return idx % max(n, 1)


PUT = OpSpec(
    "PutBackward0", ("self", "source"),
    {"self": ("index", "source"), "source": ("index", "source")},
    backward=lambda c, g: c.grads(
        lambda: g if c.accumulate else put(g, c.index, common.zeros_like(c.source), False),
        lambda: views.reshape(take(g, c.index), tuple(c.source.shape))),
    jvp=lambda c: put(c.self_t, c.index, c.source_t, c.accumulate))


def put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    if self.dtype is not source.dtype:
        raise RuntimeError(messages.put_dtype(self.dtype.scalar_name, source.dtype.scalar_name))
    arr = np.array(self._data, copy=True)   # self's layout (torch: clone, then put_)
    idx = _flat_index(self, index).reshape(-1)
    # positions in row-major order whatever the layout: reshape(-1) of a transposed array
    # is a copy, into which the writes were lost (a transposed grad in PutBackward0 kept
    # the values put over, which torch's backward zeroes)
    at = np.unravel_index(idx, arr.shape) if arr.ndim else (np.zeros_like(idx),)
    target = arr if arr.ndim else arr.reshape(1)
    if accumulate:
        np.add.at(target, at, source._data.reshape(-1))
    else:
        target[at] = source._data.reshape(-1)
    out = common.in_layout_of(common.new(arr, self.dtype, common.common_device([self, source])),
                              self)   # clone keeps self's layout (MemoryFormat::Preserve)
    return record(PUT, out, [self, source], index=index, accumulate=accumulate)


TAKE = OpSpec(
    "TakeBackward0", ("self",), {"self": ("index", "self")},
    # take_backward: zeros_like(self).put_(index, grad, true): repeated indices add up; in
    # self's layout, at _version 1 (the put_)
    backward=lambda c, g: [common.written_in_place(put(common.zeros_like(c.self), c.index, g,
                                                       True))],
    jvp="auto_linear")


@linear_forward(TAKE)
def take(self: Tensor, index: Tensor, *, out: Tensor | None = None) -> Tensor:
    if out is not None:   # take_out checks overlap before it resizes
        out_overloads.assert_no_overlap(out, (self, index))
        return out_overloads.into_out("take", out, (self, index), lambda: take(self, index),
                                      no_overlap=True)
    arr = self._data.reshape(-1)[_flat_index(self, index)]
    return record(TAKE, common.new(arr, self.dtype, self.device), [self], index=index)


def take_along_dim(self: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """ATen's: both broadcast to each other except along dim (broadcast_to: ExpandBackward0
    nodes), then gather; with no dim, the flattened tensors (views)."""
    if dim is None:
        return indexing.gather(views.view(self, (-1,)), 0, views.view(indices, (-1,)))
    if self.ndim != indices.ndim:   # no broadcasting of ranks along a dim
        raise RuntimeError(messages.take_along_dim_ranks(self.ndim, indices.ndim))
    d = common.wrap_dim(dim, self.ndim)
    # negative indices count from the end (ATen wraps them before its gather)
    idx = indices._data
    if (idx < 0).any():
        indices = common.new(np.where(idx < 0, idx + self.shape[d], idx), indices.dtype,
                             indices.device)
    self_sizes = list(self.shape)
    self_sizes[d] = indices.shape[d]
    shape = list(common.broadcast_shape(tuple(self_sizes), tuple(indices.shape)))
    # the index is not differentiable: torch's broadcast of it is no view to autograd
    index_b = common.new(np.broadcast_to(indices._data, shape), indices.dtype, indices.device)
    shape[d] = self.shape[d]
    self_b = reductions.expand(self, common.broadcast_shape(tuple(shape), tuple(self.shape)))
    return indexing.gather(self_b, d, index_b)
