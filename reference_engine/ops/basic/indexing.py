"""Index ops with a dim argument: gather, scatter, scatter_add, index_select, index_add,
masked_fill. (Tensor indexing x[...] lives in views_indexing.py; flat-index plumbing in
ops/common.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import dtypes, messages
from ...autograd_meta import OpSpec, linear_forward, record
from ...tensor import Tensor
from .. import common, out_overloads
from . import elementwise, reductions, views


def _grid(index: Tensor, dim: int) -> tuple[np.ndarray, ...]:
    """numpy fancy index addressing, for each element of index, the element of the
    indexed tensor that torch's gather/scatter along dim touches."""
    idx = index._data.astype(np.int64)
    if not idx.ndim:
        return (idx,)
    grid: list[np.ndarray] = list(np.indices(idx.shape, sparse=False))
    grid[dim] = idx
    return tuple(grid)


def _write_grid(index: Tensor, dim: int) -> tuple[np.ndarray, ...]:
    """_grid for a write: a 0-d index as one of shape (1,), like the 0-d src it writes."""
    return _grid(index, dim) if index.ndim else (index._data.astype(np.int64).reshape(1),)


# ---- gather / scatter / scatter_add -------------------------------------------------------

GATHER = OpSpec(
    "GatherBackward0", ("self",), {"self": ("self", "index")},
    lambda c, g: [common.written_in_place(scatter_add(
        common.new(np.zeros(c.self.shape), g.dtype, g.device), c.dim, c.index, g))],
    jvp="auto_linear")
SCATTER = OpSpec(
    "ScatterBackward0", ("self", "src"), {"self": ("index",), "src": ("index",)},
    lambda c, g: c.grads(lambda: scatter(g, c.dim, c.index, 0),
                         lambda: gather(g, c.dim, c.index)),
    jvp=lambda c: scatter(c.self_t, c.dim, c.index, c.src_t))
# scatter.value: self with a number written at index (ScatterBackward1)
SCATTER_VALUE = OpSpec(
    "ScatterBackward1", ("self",), {"self": ("index",)},
    lambda c, g: [scatter(g, c.dim, c.index, 0)],
    jvp=lambda c: scatter(c.self_t, c.dim, c.index, 0))
SCATTER_ADD = OpSpec(
    "ScatterAddBackward0", ("self", "src"), {"src": ("index",)},
    lambda c, g: c.grads(lambda: g, lambda: gather(g, c.dim, c.index)),
    jvp=lambda c: scatter_add(c.self_t, c.dim, c.index, c.src_t))


def _dims_1(a: np.ndarray) -> np.ndarray:
    """gather and scatter take a 0-d tensor as one of shape (1,) (a view of it)."""
    return a.reshape(1) if a.ndim == 0 else a


@linear_forward(GATHER)
def gather(self: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out: Tensor | None = None) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    if index.numel():   # gather's meta function checks nothing of an empty index
        if index.dtype not in (dtypes.int64, dtypes.int32):
            raise RuntimeError(messages.GATHER_INDEX_DTYPE)
        _gather_checks(self, d, index)
    if out is not None:
        if out.dtype is not self.dtype:
            raise RuntimeError(messages.out_dtype(C_NAMES.get(self.dtype.scalar_name, ""),
                                                  C_NAMES.get(out.dtype.scalar_name, "")))
        return out_overloads.into_out("gather", out, (self, index),
                                      lambda: gather(self, dim, index), no_overlap=True)
    picked = _dims_1(self._data)[_grid(index, d)] if index.numel() else \
        np.zeros(index.shape, self._data.dtype)
    out = common.new(picked, self.dtype, self.device)
    return record(GATHER, out, [self], dim=d, index=index)


# caffe2's TypeMeta names, which the gather out= dtype check prints
C_NAMES = {"Float": "float", "Double": "double", "Long": "long int", "Int": "int",
           "Bool": "bool"}


def _gather_checks(self: Tensor, dim: int, index: Tensor) -> None:
    """gather_shape_check, then the kernel's bounds check (their texts)."""
    if max(index.ndim, 1) != max(self.ndim, 1):
        raise RuntimeError(messages.GATHER_INDEX_DIMS)
    for d in range(index.ndim):
        if d != dim and index.shape[d] > self.shape[d]:
            raise RuntimeError(messages.gather_size(d, messages.sizes(index.shape),
                                                    messages.sizes(self.shape), dim))
    size = self.shape[dim] if self.ndim else 1
    bad = index._data[(index._data < 0) | (index._data >= size)]
    if bad.size:
        raise RuntimeError(messages.index_out_of_bounds(int(bad.reshape(-1)[0]), dim, size))


def scatter(self: Tensor, dim: int, index: Tensor, src: Any) -> Tensor:
    """self with src's elements (or the number src) written at index along dim; of
    repeated indices the last write stays, as the serial CPU kernel's."""
    d = common.wrap_dim(dim, self.ndim)
    arr = np.array(self._data, copy=True)
    if not isinstance(src, Tensor):
        scatter_checks("scatter", self, d, index, None)
        _dims_1(arr)[_write_grid(index, d)] = src
        return record(SCATTER_VALUE, common.new(arr, self.dtype, self.device), [self], dim=d,
                      index=index)
    scatter_checks("scatter", self, d, index, src)
    _dims_1(arr)[_write_grid(index, d)] = _dims_1(src._data)[tuple(slice(0, n) for n in
                                                             _dims_1(index._data).shape)]
    out = common.new(arr, self.dtype, common.common_device([self, src]))
    return record(SCATTER, out, [self, src], dim=d, index=index)


def scatter_checks(name: str, self: Tensor, dim: int, index: Tensor, src: Tensor | None
                   ) -> None:
    """ATen's scatter_gather_dtype_check and scatter_shape_check, then the kernel's bounds
    check (their order and texts)."""
    if src is not None and self.dtype is not src.dtype:
        raise RuntimeError(messages.scatter_dtype(name))
    if max(index.ndim, 1) != max(self.ndim, 1):
        raise RuntimeError(messages.SCATTER_INDEX_DIMS_SELF)
    if src is not None and max(index.ndim, 1) != max(src.ndim, 1):
        raise RuntimeError(messages.SCATTER_INDEX_DIMS_SRC)
    size = self.shape[dim] if self.ndim else 1
    bad = index._data[(index._data < 0) | (index._data >= size)]
    if bad.size:
        raise RuntimeError(messages.index_out_of_bounds(int(bad.reshape(-1)[0]), dim, size))


def scatter_add(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Repeated indices add up (np.add.at, as the kernel's accumulation)."""
    d = common.wrap_dim(dim, self.ndim)
    arr = np.array(self._data, copy=True)
    if not index.numel():   # scatter_shape_check checks nothing of an empty index
        if self.dtype is not src.dtype:
            raise RuntimeError(messages.scatter_dtype("scatter"))
        return record(SCATTER_ADD, common.new(arr, self.dtype, self.device), [self, src],
                      dim=d, index=index)
    scatter_checks("scatter", self, d, index, src)   # torch's text names scatter
    np.add.at(_dims_1(arr), _write_grid(index, d),
              _dims_1(src._data)[tuple(slice(0, n) for n in _dims_1(index._data).shape)])
    return record(SCATTER_ADD, common.new(arr, self.dtype, self.device), [self, src], dim=d,
                  index=index)


# ---- index_select / index_add --------------------------------------------------------------

INDEX_SELECT = OpSpec(
    "IndexSelectBackward0", ("self",), {"self": ("index",)},
    lambda c, g: [common.written_in_place(index_add(
        common.new(np.zeros(c.self_sym_sizes), g.dtype, g.device), c.dim, c.index, g))],
    jvp="auto_linear")
INDEX_ADD = OpSpec(
    "IndexAddBackward0", ("self", "source"), {"source": ("index", "source")},
    lambda c, g: c.grads(lambda: g, lambda: _alpha(_index_add_source(g, c), c.alpha)),
    jvp=lambda c: index_add(c.self_t, c.dim, c.index, _alpha(c.source_t, c.alpha)))


def _alpha(t: Tensor, alpha: Any) -> Tensor:
    """maybe_multiply: a multiply only where alpha is not 1."""
    return t if alpha == 1 else elementwise.mul(t, alpha)


def _index_add_source(g: Tensor, c: Any) -> Tensor:
    """grad.index_select(dim, index), as source's shape (a 0-d source: its one element)."""
    out = index_select(g, c.dim, c.index)
    return views.reshape(out, ()) if c.source.ndim == 0 and out.ndim else out


@linear_forward(INDEX_SELECT)
def index_select(self: Tensor, dim: int, index: Tensor, *, out: Tensor | None = None
                 ) -> Tensor:
    if out is not None:
        return out_overloads.into_out("index_select", out, (self, index),
                                      lambda: index_select(self, dim, index), no_overlap=True)
    d = common.wrap_dim(dim, self.ndim)
    _check_select_bounds(self, d, index._data.reshape(-1).astype(np.int64))
    # a 0-d self gives a 0-d result (index_select_out_cpu_ takes it as its one element)
    arr = np.take(self._data.reshape(-1) if self.ndim == 0 else self._data,
                  index._data.reshape(-1).astype(np.int64), axis=d)
    if self.ndim == 0:
        arr = arr.reshape(())
    return record(INDEX_SELECT, common.new(arr, self.dtype, self.device), [self], dim=d,
                  index=index, self_sym_sizes=tuple(self.shape))


def _check_select_bounds(self: Tensor, d: int, idx: np.ndarray) -> None:
    """index_select_out_cpu_'s index checks (no index wraps): with self of 2 dims or more,
    an empty self's and the dim-1 fast path's (a RuntimeError naming the first index out
    of bounds), else the general path's (an IndexError)."""
    if idx.size == 0:
        return
    size = self.shape[d] if self.ndim else 1
    bad = idx[(idx < 0) | (idx >= size)]
    if self.ndim > 1 and (self.numel() == 0 or d == 1):
        if self.numel() == 0 and size == 0:
            raise RuntimeError(messages.INDEX_SELECT_EMPTY_AXIS)
        if bad.size:
            raise RuntimeError(messages.index_select_out_of_data_bounds(int(bad[0]), size))
    elif bad.size:
        raise IndexError(messages.INDEX_SELECT_OUT_OF_RANGE)


def fill_until_out_of_bounds(self: Tensor, d: int, index: Tensor, value: Any,
                             arr: np.ndarray) -> None:
    """index_fill_kernel's bounds check, which raises at the first index out of bounds
    after filling (in `arr`, self's values or their copy) what its loop reached before it:
    the loop walks the dims in self's memory order (outermost: the largest stride), the
    index's dim among them, so the slices of the indices before the bad one are filled where
    the dims outer than the index's are 0 (torch leaves them written; found by the
    program generator)."""
    size = self.shape[d] if self.ndim else 1
    idx = index._data.reshape(-1).astype(np.int64)
    bad = np.nonzero((idx < -size) | (idx >= size))[0]
    if not bad.size:
        return
    k = int(bad[0])
    if arr.ndim == 0:
        if k:
            arr[()] = value._data if isinstance(value, Tensor) else value
    else:
        strides = self.stride()
        outer = {i for i in range(self.ndim) if (-strides[i], i) < (-strides[d], d)}
        key = tuple(idx[:k] if i == d else 0 if i in outer else slice(None)
                    for i in range(self.ndim))
        arr[key] = dtypes.cast(value._data, arr.dtype) if isinstance(value, Tensor) else value
    raise IndexError(messages.index_out_of_range(int(idx[k]), d, size))


def index_func_dtype_check(func: str, self: Tensor, source: Tensor) -> None:
    """index_func_meta_impl's dtype check (index_add_, index_reduce_), before its shape's."""
    if self.dtype is not source.dtype:
        raise RuntimeError(messages.index_func_dtype(func, self.dtype.scalar_name,
                                                     source.dtype.scalar_name))


def index_add(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
              ) -> Tensor:
    """Repeated indices add up (np.add.at, as the kernel's accumulation)."""
    d = common.wrap_dim(dim, self.ndim)
    index_func_dtype_check("index_add_", self, source)
    if self.ndim and source.ndim and (source.ndim != self.ndim or any(
            a != b for i, (a, b) in enumerate(zip(self.shape, source.shape, strict=True))
            if i != d)):
        raise RuntimeError(messages.index_add_source_shape(messages.sizes(self.shape),
                                                           messages.sizes(source.shape)))
    arr = np.array(self._data, copy=True)
    key: Any = (slice(None),) * d + (index._data.reshape(-1).astype(np.int64),)
    src = source._data if alpha == 1 else source._data * np.asarray(alpha, self.dtype.np)
    if arr.ndim == 0:
        arr = arr.reshape(1)
        np.add.at(arr, key, src.reshape(-1))
        arr = arr.reshape(())
    else:
        np.add.at(arr, key, src)
    out = common.new(arr, self.dtype, common.common_device([self, source]))
    return record(INDEX_ADD, out, [self, source], dim=d, index=index, alpha=alpha)


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
    """Out of place, self and mask broadcast to each other (ATen's expand_outplace; the
    autograd engine sums self's grad back to its shape; mask first, as torch names them)."""
    shape = common.broadcast_shape(tuple(mask.shape), tuple(self.shape))
    m = np.broadcast_to(mask._data, shape)
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(messages.masked_fill_value_dims(value.ndim))
    # masked_fill__cpu takes a tensor value as value.item(): checked_convert's overflow rule
    if isinstance(value, Tensor):
        dtypes.scalar_in(value._data.item(), self.dtype)
    else:
        value = dtypes.scalar_in(value, self.dtype)
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


def index_fill_value(self: Tensor, index: Tensor, value: Any) -> Any:
    """index_fill_'s checks before its kernel, and the number it fills: a tensor value must
    be 0-d (its item() is the Scalar); the index int64; a complex Scalar into a real self is
    refused, whatever its imaginary part; the kernel's value.to<scalar_t>() is
    checked_convert (dtypes.scalar_in)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(messages.index_fill_value_dims(value.ndim))
        value = value._data.item()
    if index.dtype is not dtypes.int64:
        raise IndexError(messages.INDEX_FILL_INDEX_DTYPE)
    if isinstance(value, complex) and not self.dtype.is_complex:
        raise RuntimeError(messages.INDEX_FILL_COMPLEX_INTO_REAL)
    return dtypes.scalar_in(value, self.dtype)


def index_fill(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of self with the slices at `index` along dim set to value (a number, or a
    0-dim tensor, which is then differentiable: IndexFillBackward1)."""
    fill = index_fill_value(self, index, value)
    d = common.wrap_dim(dim, self.ndim)
    arr = np.array(self._data, copy=True)
    fill_until_out_of_bounds(self, d, index, fill, arr)
    # a 0-d self is filled as one of shape (1,), a view of it
    key = (slice(None),) * d + (index._data.reshape(-1).astype(np.int64),)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    arr[key] = fill
    if isinstance(value, Tensor):
        out = common.new(arr.reshape(self.shape), self.dtype, common.common_device([self, value]))
        return record(INDEX_FILL_TENSOR, out, [self, value], dim=d, index=index)
    out = common.new(arr.reshape(self.shape), self.dtype, self.device)
    return record(INDEX_FILL, out, [self], dim=d, index=index)

