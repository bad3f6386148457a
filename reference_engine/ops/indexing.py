"""Index ops with a dim argument: gather, scatter, scatter_add, index_select, index_add,
masked_fill. (Tensor indexing x[...] lives in views.py; flat-index plumbing in
ops/common.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..autograd_meta import OpSpec, linear_forward, record
from ..tensor import Tensor
from . import common


def _grid(index: Tensor, dim: int) -> tuple[np.ndarray, ...]:
    """numpy fancy index addressing, for each element of index, the element of the
    indexed tensor that torch's gather/scatter along dim touches."""
    idx = index._data.astype(np.int64)
    if not idx.ndim:
        return (idx,)
    grid: list[np.ndarray] = list(np.indices(idx.shape, sparse=False))
    grid[dim] = idx
    return tuple(grid)


# ---- gather / scatter / scatter_add -------------------------------------------------------

GATHER = OpSpec(
    "GatherBackward0", ("self",), {"self": ("self", "index")},
    lambda c, g: [common.written_in_place(scatter_add(
        common.new(np.zeros(c.self.shape), g.dtype, g.device), c.dim, c.index, g))],
    jvp="auto_linear")
# Only max/min's backward scatters, always into fresh zeros: the self formula (torch's
# grad.scatter(dim, index, 0), a ScatterBackward1 node) is never needed, so neither is it.
SCATTER = OpSpec(
    "ScatterBackward0", ("self", "src"), {"src": ("index",)},
    lambda c, g: c.grads(lambda: None, lambda: gather(g, c.dim, c.index)),
    jvp=lambda c: scatter(c.self_t, c.dim, c.index, c.src_t))
SCATTER_ADD = OpSpec(
    "ScatterAddBackward0", ("self", "src"), {"src": ("index",)},
    lambda c, g: c.grads(lambda: g, lambda: gather(g, c.dim, c.index)),
    jvp=lambda c: scatter_add(c.self_t, c.dim, c.index, c.src_t))


def _dims_1(a: np.ndarray) -> np.ndarray:
    """gather and scatter take a 0-d tensor as one of shape (1,) (a view of it)."""
    return a.reshape(1) if a.ndim == 0 else a


@linear_forward(GATHER)
def gather(self: Tensor, dim: int, index: Tensor) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    out = common.new(_dims_1(self._data)[_grid(index, d)], self.dtype, self.device)
    return record(GATHER, out, [self], dim=d, index=index)


def scatter(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    arr = np.array(self._data, copy=True)
    _dims_1(arr)[_grid(index, d)] = src._data[tuple(slice(0, n) for n in index.shape)]
    return record(SCATTER, common.new(arr, self.dtype, self.device), [self, src], dim=d,
                  index=index)


def scatter_add(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    arr = np.array(self._data, copy=True)
    np.add.at(_dims_1(arr), _grid(index, d), src._data[tuple(slice(0, n) for n in index.shape)])
    return record(SCATTER_ADD, common.new(arr, self.dtype, self.device), [self, src], dim=d,
                  index=index)


# ---- index_select / index_add --------------------------------------------------------------

INDEX_SELECT = OpSpec(
    "IndexSelectBackward0", ("self",), {"self": ("index",)},
    lambda c, g: [common.written_in_place(index_add(
        common.new(np.zeros(c.self_sym_sizes), g.dtype, g.device), c.dim, c.index, g))],
    jvp="auto_linear")
INDEX_ADD = OpSpec(
    "IndexAddBackward0", ("self", "source"), {"source": ("index",)},
    lambda c, g: c.grads(lambda: g, lambda: index_select(g, c.dim, c.index)),
    jvp=lambda c: index_add(c.self_t, c.dim, c.index, c.source_t))


@linear_forward(INDEX_SELECT)
def index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    arr = np.take(self._data, index._data.reshape(-1).astype(np.int64), axis=d)
    return record(INDEX_SELECT, common.new(arr, self.dtype, self.device), [self], dim=d,
                  index=index, self_sym_sizes=tuple(self.shape))


def index_add(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    arr = np.array(self._data, copy=True)
    key: Any = (slice(None),) * d + (index._data.reshape(-1).astype(np.int64),)
    np.add.at(arr, key, source._data)
    return record(INDEX_ADD, common.new(arr, self.dtype, self.device), [self, source], dim=d,
                  index=index)


# ---- masked_fill --------------------------------------------------------------------------

MASKED_FILL = OpSpec("MaskedFillBackward0", ("self",), {"self": ("mask",)},
                     lambda c, g: [masked_fill(g, c.mask, 0)],
                     jvp=lambda c: masked_fill(c.self_t, c.mask, 0))
MASKED_FILL_TENSOR = OpSpec(
    "MaskedFillBackward1", ("self", "value"), {"self": ("mask",), "value": ("mask",)},
    lambda c, g: c.grads(lambda: masked_fill(g, c.mask, 0),
                         lambda: _masked_fill_value_backward(g, c.mask)),
    jvp=lambda c: masked_fill(c.self_t, c.mask, c.value_t))


def _masked_fill_value_backward(g: Tensor, mask: Tensor) -> Tensor:
    """masked_fill_backward: grad.masked_select(mask).sum()."""
    positions = np.flatnonzero(np.broadcast_to(mask._data, g.shape))
    return reductions.sum(common.gather(g, positions, "MaskedSelectBackward0"))


def masked_fill(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    common.broadcast_shape(tuple(self.shape), tuple(mask.shape))
    m = np.broadcast_to(mask._data, self.shape)
    if isinstance(value, Tensor):
        arr = np.where(m, dtypes.cast(value._data, self.dtype.np), self._data)
        out = common.new(arr, self.dtype, common.common_device([self, value]))
        return record(MASKED_FILL_TENSOR, out, [self, value], mask=mask)
    arr = np.where(m, np.asarray(value, dtype=self.dtype.np), self._data)
    return record(MASKED_FILL, common.new(arr, self.dtype, self.device), [self], mask=mask)


# ---- index_fill ---------------------------------------------------------------------------

# Both save the index (a SavedVariable: freed by a backward, so a second pass fails there,
# as torch's; found by the generator).
INDEX_FILL = OpSpec("IndexFillBackward0", ("self",), {"self": ("index",)},
                    backward=lambda c, g: [index_fill(g, c.dim, c.index, 0)],
                    jvp=lambda c: index_fill(c.self_t, c.dim, c.index, 0))
INDEX_FILL_TENSOR = OpSpec(
    "IndexFillBackward1", ("self", "value"), {"self": ("index",), "value": ("index",)},
    backward=lambda c, g: c.grads(
        lambda: index_fill(g, c.dim, c.index, 0),
        # a position listed twice was filled once: its grad counts once (at::_unique)
        lambda: reductions.sum(index_select(g, c.dim, common.new(np.unique(c.index._data),
                                                       dtypes.int64, g.device)))),
    jvp=lambda c: index_fill(c.self_t, c.dim, c.index, c.value_t))


def index_fill(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of self with the slices at `index` along dim set to value (a number, or a
    0-dim tensor, which is then differentiable: IndexFillBackward1)."""
    d = common.wrap_dim(dim, self.ndim)
    arr = np.array(self._data, copy=True)
    key = (slice(None),) * d + (index._data.reshape(-1).astype(np.int64),)
    if isinstance(value, Tensor):
        arr[key] = dtypes.cast(value._data, self.dtype.np)
        out = common.new(arr, self.dtype, common.common_device([self, value]))
        return record(INDEX_FILL_TENSOR, out, [self, value], dim=d, index=index)
    arr[key] = value
    return record(INDEX_FILL, common.new(arr, self.dtype, self.device), [self], dim=d, index=index)


# It imports this module; used at call time.
from . import reductions  # noqa: E402
