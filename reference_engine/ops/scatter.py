"""Ops that write into a copy of self by index: scatter_reduce and index_reduce, index_copy,
index_put. (The in-place forms of the scatter family: ops/scatter_inplace.py; scatter,
scatter_add, gather, index_add, index_select, index_fill, masked_fill:
ops/basic/indexing.py; put/take and take_along_dim: ops/put_take.py;
masked_select/masked_scatter: ops/masked.py; the view scatters
select/slice/diagonal_scatter: ops/view_scatters.py.)

Duplicate indices follow torch's CPU kernels: a reduction (scatter_reduce, index_reduce,
put/index_put with accumulate, take's backward) combines every source element sent to one
position; a plain write (index_copy, put and index_put without accumulate) keeps the last
one, as the serial kernel writes in order (numpy's fancy assignment does the same).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, forward_ad, messages, views_indexing, warn
from ..autograd_meta import OpSpec, record
from ..graph import Node, node_class
from ..tensor import Tensor
from . import common
from .basic import comparisons, elementwise, indexing, views

# ---- addressing: where each source element goes --------------------------------------------


def _scatter_grid(self: Tensor, dim: int, index: Tensor) -> tuple[np.ndarray, ...]:
    """scatter's: along dim, index's value; elsewhere, the element's own position."""
    idx = index._data.astype(np.int64)
    if not idx.ndim:
        return (idx.reshape(1),)
    grid: list[np.ndarray] = list(np.indices(idx.shape))
    grid[dim] = idx
    return tuple(grid)


def _index_grid(self: Tensor, dim: int, index: Tensor, source: Tensor) -> tuple[np.ndarray, ...]:
    """index_add's: source's slice i along dim goes to slice index[i]."""
    idx = index._data.reshape(-1).astype(np.int64)
    shape = source.shape if source.ndim else (1,)
    grid: list[np.ndarray] = list(np.indices(shape))
    grid[dim] = idx[grid[dim]]
    return tuple(grid)


def _as_1d(a: np.ndarray) -> np.ndarray:
    return a.reshape(1) if a.ndim == 0 else a


IDENTITY = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "amax": -np.inf, "amin": np.inf}
UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
         "amin": np.minimum}


def _reduce_into(self: np.ndarray, grid: tuple[np.ndarray, ...], values: np.ndarray,
                 reduce: str, include_self: bool) -> np.ndarray:
    """self with every value combined into its position by `reduce` (self's own value
    joining unless include_self is False; positions no value reaches keep self's)."""
    arr = _as_1d(np.array(self, copy=True))
    touched = np.zeros(arr.shape, dtype=bool)
    touched[grid] = True
    if not include_self:
        arr[touched] = IDENTITY[reduce]
    with np.errstate(all="ignore"):
        UFUNC[reduce].at(arr, grid, values)
        if reduce == "mean":
            count = np.full(arr.shape, 1 if include_self else 0, dtype=arr.dtype)
            np.add.at(count, grid, 1)
            arr = arr / np.maximum(count, 1)
    return arr.reshape(self.shape)


# ---- scatter_reduce / index_reduce ------------------------------------------------------------

class _Kind:
    """The two addressings' engine ops, for the formulas (FunctionsManual.cpp's
    scatter_reduce_backward and index_reduce_backward are the same formula in each)."""

    def __init__(self, select: Callable[..., Tensor], add: Callable[..., Tensor],
                 zero_at: Callable[..., Tensor], reduce: Callable[..., Tensor],
                 prod_double_backward: str) -> None:
        self.select, self.add, self.zero_at, self.reduce = select, add, zero_at, reduce
        # the DelayedError message of prod's src grad where >1 zeros meet at one position
        self.prod_double_backward = prod_double_backward


class _DelayedErrorNode(Node):
    """torch::autograd::Error as DelayedError makes it (torch/csrc/autograd/functions/
    basic_ops.cpp): the values pass through; a backward that reaches the node raises."""

    def __init__(self, message: str, next_edges: list[Any]) -> None:
        super().__init__(next_edges)
        self.message = message

    def name(self) -> str:
        return "torch::autograd::Error"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        raise RuntimeError(self.message)


def _delayed_error(t: Tensor, message: str) -> Tensor:
    """DelayedError(message) applied to t: where t has history (a create_graph backward),
    its values behind an Error node whose backward raises `message`."""
    if t.grad_fn is None:
        return t
    node = node_class("Error", _DelayedErrorNode)(message, [(t.grad_fn, t._output_nr)])
    node.input_metadata.append(t._meta())
    out = Tensor(t._data, t.dtype, t.device)
    out._set_grad_fn(node, 0)
    return out


def _const(a: np.ndarray, like: Tensor) -> Tensor:
    return common.new(a, like.dtype, like.device)


def _reduce_backward(k: _Kind, c: Any, g: Tensor) -> list[Tensor | None]:
    """scatter_reduce_backward / index_reduce_backward. The masks and counts are constants
    (comparisons), computed in numpy; what carries grad is written in engine ops."""
    dim, index, reduce, include_self = c.dim, c.index, c.reduce, c.include_self
    self, src, result = c.self, c.src, c.result
    grid = c.grid
    if reduce == "sum":
        gs, gsrc = g, k.select(g, dim, index, src)
    elif reduce == "mean":
        n = np.full(g.shape, 1 if include_self else 0, dtype=g.dtype.np)
        np.add.at(_as_1d(n), grid, 1)
        n[n == 0] = 1
        gs = elementwise.div(g, _const(n, g))
        gsrc = elementwise.div(k.select(g, dim, index, src), _const(_as_1d(n)[grid].reshape(
            src.shape), g))
    elif reduce in ("amax", "amin"):
        # ties share the grad evenly; self counts among them even with include_self=False
        # (torch's formula; grad_self is zeroed at the scattered positions afterwards)
        value = _as_1d(result._data)[grid].reshape(src.shape)
        self_is = (self._data == result._data).astype(g.dtype.np)
        src_is = (src._data == value).astype(g.dtype.np)
        n = np.array(self_is, copy=True)
        np.add.at(_as_1d(n), grid, src_is.reshape(-1) if src.ndim == 0 else src_is)
        distributed = elementwise.div(g, _const(n, g))
        gs = elementwise.mul(_const(self_is, g), distributed)
        gsrc = elementwise.mul(_const(src_is, g), k.select(distributed, dim, index, src))
    else:   # prod: the exclusive product, with zeros in self or src handled as torch does
        self_zero = common.new(self._data == 0, dtypes.bool_, self.device)
        masked_self = indexing.masked_fill(self, self_zero, 1)
        masked_self_result = k.reduce(masked_self, dim, index, src, reduce, include_self)
        gs = elementwise.div(elementwise.mul(g, masked_self_result), masked_self)
        src_zero = src._data == 0
        zeros = np.zeros(self.shape, dtype=g.dtype.np)
        np.add.at(_as_1d(zeros), grid, src_zero.astype(g.dtype.np).reshape(-1)
                  if src.ndim == 0 else src_zero.astype(g.dtype.np))
        num_zeros = _as_1d(zeros)[grid].reshape(src.shape)
        single = common.new(src_zero & (num_zeros == 1), dtypes.bool_, src.device)
        masked_src = indexing.masked_fill(src, single, 1)
        masked_src_result = k.reduce(self, dim, index, masked_src, reduce, include_self)
        gsrc = comparisons.where(
            single, k.select(elementwise.mul(g, masked_src_result), dim, index, src),
            elementwise.div(k.select(elementwise.mul(g, result), dim, index, src),
                            indexing.masked_fill(src, common.new(src_zero, dtypes.bool_,
                                                                 src.device), 1)))
        if np.any(num_zeros > 1):   # gradgrad is not supported there
            gsrc = _delayed_error(gsrc, k.prod_double_backward)
    if not include_self:
        gs = k.zero_at(gs, dim, index)
    return c.grads(lambda: gs, lambda: gsrc)


def _gather_as(g: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return indexing.gather(g, dim, index)


def _select_as(g: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """derivatives.yaml's index_add source formula: index_select, as source's shape (a 0-d
    source takes the one element)."""
    out = indexing.index_select(g, dim, index)
    return views.reshape(out, ()) if src.ndim == 0 and out.ndim else out


SCATTER_KIND = _Kind(_gather_as, indexing.scatter_add,
                     lambda g, d, i: indexing.scatter(g, d, i, 0),
                     lambda *a: scatter_reduce(*a[:5], include_self=a[5]),
                     messages.reduce_prod_double_backward("scatter_reduce", "src"))
INDEX_KIND = _Kind(_select_as, indexing.index_add,
                   lambda g, d, i: indexing.index_fill(g, d, i, 0),
                   lambda *a: index_reduce(*a[:5], include_self=a[5]),
                   messages.reduce_prod_double_backward("index_reduce", "source"))


def _scatter_reduce_jvp(c: Any) -> Tensor:
    """scatter_reduce_jvp: sum and mean are linear in (self, src); amax/amin average the
    tangents of the elements equal to the result (the even split of the backward)."""
    if c.reduce in ("sum", "mean"):
        return scatter_reduce(c.self_t, c.dim, c.index, c.src_t, c.reduce,
                              include_self=c.include_self)
    if c.reduce == "prod":   # the product rule: result * (sum of each factor's t / p)
        rel = scatter_reduce(elementwise.div(c.self_t, c.self), c.dim, c.index,
                             elementwise.div(c.src_t, c.src), "sum",
                             include_self=c.include_self)
        return elementwise.mul(c.result, rel)
    value = _as_1d(c.result._data)[c.grid].reshape(c.src.shape)
    self_is = _const(c.self._data == c.result._data, c.self_t)
    src_is = _const(c.src._data == value, c.src_t)
    num = scatter_reduce(elementwise.mul(c.self_t, self_is), c.dim, c.index,
                         elementwise.mul(c.src_t, src_is), "sum", include_self=c.include_self)
    den = scatter_reduce(self_is, c.dim, c.index, src_is, "sum", include_self=c.include_self)
    return elementwise.div(num, den)


SCATTER_REDUCE = OpSpec(
    "ScatterReduceBackward0", ("self", "src"),
    {"self": ("index", "result", "self", "src"), "src": ("index", "result", "self", "src")},
    backward=lambda c, g: _reduce_backward(SCATTER_KIND, c, g), jvp=_scatter_reduce_jvp)
# index_reduce has no forward-mode formula in derivatives.yaml
INDEX_REDUCE = OpSpec(
    "IndexReduceBackward0", ("self", "source"),
    {"self": ("index", "result", "self", "source"),
     "source": ("index", "result", "self", "source")},
    backward=lambda c, g: _reduce_backward(INDEX_KIND, _Renamed(c), g))


class _Renamed:
    """index_reduce's ctx, its `source` read as `src` (one formula for both)."""

    def __init__(self, c: Any) -> None:
        self._c = c
        self.src = c.source

    def __getattr__(self, name: str) -> Any:
        return getattr(self._c, name)


REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _check_reduce(name: str, reduce: str, allowed: tuple[str, ...]) -> None:
    if reduce not in allowed:
        raise RuntimeError(messages.reduce_argument(name, reduce))


def scatter_reduce(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    _check_reduce("scatter_reduce", reduce, REDUCES)
    d = common.wrap_dim(dim, self.ndim)
    indexing.scatter_checks("scatter_reduce", self, d, index, src)
    grid = _scatter_grid(self, d, index)
    values = _as_1d(src._data)[tuple(slice(0, n) for n in _as_1d(index._data).shape)]
    arr = _reduce_into(self._data, grid, values, reduce, include_self)
    out = common.new(arr, self.dtype, common.common_device([self, src]))
    return record(SCATTER_REDUCE, out, [self, src], dim=d, index=index, reduce=reduce,
                  include_self=include_self, grid=grid)


def index_reduce(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    _check_reduce("index_reduce", reduce, ("prod", "mean", "amax", "amin"))
    d = common.wrap_dim(dim, self.ndim)
    indexing.index_func_dtype_check("index_reduce_", self, source)
    _index_checks(self, d, index, source)
    # the kernel warns; the meta function's checks come first, and before the kernel torch's
    # generated code refuses a tangent (index_reduce has no forward formula): no warning then
    if any(forward_ad.fw_grad(t) is not None for t in (self, source)):
        raise NotImplementedError(messages.fwad_no_formula("index_reduce"))
    warn.warn_once(messages.INDEX_REDUCE_BETA)
    grid = _index_grid(self, d, index, source)
    arr = _reduce_into(self._data, grid, _as_1d(source._data), reduce, include_self)
    out = common.new(arr, self.dtype, common.common_device([self, source]))
    return record(INDEX_REDUCE, out, [self, source], dim=d, index=index, reduce=reduce,
                  include_self=include_self, grid=grid)


def _index_checks(self: Tensor, dim: int, index: Tensor, source: Tensor) -> None:
    """index_func_meta_impl's shape check (index_add, index_copy, index_reduce)."""
    if self.ndim and source.ndim and (source.ndim != self.ndim or any(
            a != b for i, (a, b) in enumerate(zip(self.shape, source.shape, strict=True))
            if i != dim)):
        raise RuntimeError(messages.index_add_source_shape(messages.sizes(self.shape),
                                                           messages.sizes(source.shape)))


# ---- index_copy --------------------------------------------------------------------------------

INDEX_COPY = OpSpec(
    "IndexCopyBackward0", ("self", "source"),
    {"self": ("index",), "source": ("index", "source")},
    backward=lambda c, g: c.grads(lambda: indexing.index_fill(g, c.dim, c.index, 0),
                                  lambda: _select_as(g, c.dim, c.index, c.source)),
    jvp=lambda c: index_copy(c.self_t, c.dim, c.index, c.source_t))


def index_copy(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    # index_copy's meta function: its own checks and texts (not index_add's), in its order
    if source.ndim != self.ndim and source.ndim and self.ndim:
        raise IndexError(messages.index_copy_dims(source.ndim, self.ndim))
    if self.dtype is not source.dtype:
        raise RuntimeError(messages.index_copy_dtype(self.dtype.scalar_name,
                                                     source.dtype.scalar_name))
    self_slice = [s for i, s in enumerate(self.shape) if i != d]
    source_slice = [s for i, s in enumerate(source.shape) if i != d]
    if self_slice != source_slice:
        raise RuntimeError(messages.index_copy_slices(self_slice, d, source_slice))
    arr = _as_1d(np.array(self._data, copy=True))
    arr[_index_grid(self, d, index, source)] = _as_1d(source._data)
    out = common.new(arr.reshape(self.shape), self.dtype, common.common_device([self, source]))
    return record(INDEX_COPY, out, [self, source], dim=d, index=index)


# ---- index_put ---------------------------------------------------------------------------------

def _index_put_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    zeros = common.zeros_scalar(g)
    return c.grads(lambda: g if c.accumulate else common.index_put(g, c.positions, zeros),
                   lambda: common.gather(g, c.positions, "IndexBackward0"))


def index_put(self: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """self with values written (or added) at the positions the list of index tensors
    picks, as `self[indices] = values` (the indices are saved: IndexPutBackward0's)."""
    indices = views_indexing.bytes_as_masks(list(indices), values, accumulate)
    positions = views_indexing.picked_positions(
        self, tuple(views_indexing.index_array(i) for i in indices))
    saves = {f"indices_{i}": t for i, t in enumerate(indices) if isinstance(t, Tensor)}
    spec = OpSpec("IndexPutBackward0", ("self", "values"),
                  {"self": tuple(saves), "values": tuple(saves)},
                  backward=_index_put_backward,
                  jvp=lambda c: index_put(c.self_t, indices, c.values_t, accumulate))
    fill = views_indexing.index_put_values(self, indices, values, accumulate)
    arr = np.array(self._data, copy=True)
    flat = arr.reshape(-1)
    vals = np.broadcast_to(fill._data, positions.shape).reshape(-1)
    if accumulate:
        np.add.at(flat, positions.reshape(-1), vals)
    else:
        flat[positions.reshape(-1)] = vals
    out = common.new(arr, self.dtype, common.common_device([self, values]))
    return record(spec, out, [self, values], positions=positions, accumulate=accumulate,
                  **saves)
