"""The view scatters: select_scatter, slice_scatter, diagonal_scatter, as_strided_scatter write
src into a copy of self where the view (select, slice, diagonal, as_strided) would read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, linear_forward, record
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor
from . import common, shape_views
from .basic import copying, inplace, views

# ---- select_scatter / slice_scatter / diagonal_scatter -------------------------------------------
# Each is `self` with one of its views replaced by src: linear, its backward the view of the
# grad (for src) and the grad with that view zeroed (for self).

def _view_scatter(self: Tensor, src: Tensor, pick: Callable[[np.ndarray], np.ndarray],
                  spec: OpSpec, **attrs: Any) -> Tensor:
    positions = pick(np.arange(self.numel()).reshape(self.shape))
    if tuple(positions.shape) != tuple(src.shape):
        raise RuntimeError(messages.view_scatter_shape(messages.sizes(positions.shape),
                                                       messages.sizes(src.shape)))
    if not self.dtype.is_differentiable and src.requires_grad and is_grad_enabled():
        # the result has self's dtype: autograd's set_history refuses to record it
        raise RuntimeError(messages.autograd_dtype(self.dtype.scalar_name))
    arr = np.array(self._data, copy=True)  # self's memory order kept, as torch's clone
    # np.put indexes in C order whatever the layout (reshape(-1) of a transposed or
    # expanded self's copy is a copy, and writing into it was lost)
    np.put(arr, positions.reshape(-1), src._data.reshape(-1))
    out = common.new(arr, self.dtype, common.common_device([self, src]))
    return record(spec, out, [self, src], **attrs)


SELECT_SCATTER = OpSpec(
    "SelectScatterBackward0", ("self", "src"),
    backward=lambda c, g: c.grads(
        lambda: select_scatter(g, common.new(np.zeros(c.src_shape), g.dtype, g.device),
                               c.dim, c.index),
        lambda: views.select(g, c.dim, c.index)),
    jvp="auto_linear")


@linear_forward(SELECT_SCATTER)
def select_scatter(self: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if not -size <= index < size:
        raise IndexError(messages.index_out_of_range(index, d, size))
    return _view_scatter(self, src, lambda a: np.take(a, index % size, axis=d),
                         SELECT_SCATTER, dim=d, index=index, src_shape=tuple(src.shape))


SLICE_SCATTER = OpSpec(
    "SliceScatterBackward0", ("self", "src"),
    backward=lambda c, g: c.grads(
        lambda: slice_scatter(g, common.new(np.zeros(c.src_shape), g.dtype, g.device),
                              c.dim, c.start, c.end, c.step),
        lambda: views.slice(g, c.dim, c.start, c.end, c.step)),
    jvp="auto_linear")


@linear_forward(SLICE_SCATTER)
def slice_scatter(self: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    key = (slice(None),) * d + (slice(start, end, step),)
    return _view_scatter(self, src, lambda a: a[key], SLICE_SCATTER, dim=d, start=start,
                         end=end, step=step, src_shape=tuple(src.shape))


DIAGONAL_SCATTER = OpSpec(
    "DiagonalScatterBackward0", ("self", "src"),
    backward=lambda c, g: c.grads(
        lambda: diagonal_scatter(g, common.new(np.zeros(c.src_shape), g.dtype, g.device),
                                 c.offset, c.dim1, c.dim2),
        lambda: views.diagonal(g, c.offset, c.dim1, c.dim2)),
    jvp="auto_linear")


@linear_forward(DIAGONAL_SCATTER)
def diagonal_scatter(self: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    d1, d2 = common.wrap_dim(dim1, self.ndim), common.wrap_dim(dim2, self.ndim)
    return _view_scatter(self, src, lambda a: np.diagonal(a, offset, d1, d2),
                         DIAGONAL_SCATTER, offset=offset, dim1=d1, dim2=d2,
                         src_shape=tuple(src.shape))


# ---- as_strided_scatter (h32ops, issue 24) -------------------------------------------------------
# TensorShape.cpp's as_strided_scatter: self cloned, src copied into the clone's as_strided view.
# Its backward (derivatives.yaml) takes as_strided views of the contiguous grad, which torch
# allows only for a contiguous self (an internal assert in the forward, Note [as_strided_scatter
# backward support]), so every input geometry there is the contiguous one.

def _as_strided_scatter_self_grad(g: Tensor, self_shape: tuple[int, ...], size: tuple[int, ...],
                                  stride: tuple[int, ...], offset: int | None) -> Tensor:
    """FunctionsManual.cpp's as_strided_scatter_backward in engine ops, so that its graph under
    create_graph is torch's: the grad's slice copied (CopySlices) into the slice of a zero
    buffer, returned through the buffer's as_strided view in self's geometry
    (AsStridedBackward0, regenerated after the copy)."""
    g = copying.contiguous(g)
    grad_slice = shape_views.as_strided(g, size, stride, offset)
    buffer = common.new(np.zeros(self_shape, g.dtype.np), g.dtype, g.device)
    result = shape_views.as_strided(buffer, self_shape, _contiguous_strides(self_shape))
    inplace.copy_(shape_views.as_strided(buffer, size, stride, offset), grad_slice)
    return result


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


AS_STRIDED_SCATTER = OpSpec(
    "AsStridedScatterBackward0", ("self", "src"),
    backward=lambda c, g: c.grads(
        lambda: _as_strided_scatter_self_grad(g, c.self_shape, c.size, c.stride,
                                              c.storage_offset),
        lambda: shape_views.as_strided(copying.contiguous(g), c.size, c.stride,
                                       c.storage_offset)),
    jvp="auto_linear")


@linear_forward(AS_STRIDED_SCATTER)
def as_strided_scatter(self: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int],
                       storage_offset: int | None = None) -> Tensor:
    if self.requires_grad and not copying.in_format(self):
        raise RuntimeError(messages.AS_STRIDED_SCATTER_NON_CONTIGUOUS)
    if not self.dtype.is_differentiable and src.requires_grad and is_grad_enabled():
        raise RuntimeError(messages.autograd_dtype(self.dtype.scalar_name))
    # self.clone() (preserve_format: a dense self's strides kept), as_strided over its storage
    arr = copying.layout_copy(self._data, dtypes.preserve_format)
    storage = arr.ravel(order="K")
    if arr.size > 1 and not np.shares_memory(storage, arr):
        raise NotImplementedError(messages.AS_STRIDED_OF_VIEW)
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    offset = None if storage_offset is None else int(storage_offset)
    positions = shape_views.strided_positions(common.new(storage, self.dtype, self.device),
                                              size, stride, offset)
    if tuple(positions.shape) != tuple(src.shape):
        raise RuntimeError(messages.view_scatter_shape(messages.sizes(positions.shape),
                                                       messages.sizes(src.shape)))
    storage[positions.reshape(-1)] = src._data.reshape(-1)
    out = common.new(arr, self.dtype, common.common_device([self, src]))
    return record(AS_STRIDED_SCATTER, out, [self, src], size=size, stride=stride,
                  storage_offset=offset, self_shape=tuple(self.shape))
