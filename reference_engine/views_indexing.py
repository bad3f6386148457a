"""Indexing a tensor with Python keys (x[...]): basic items decompose into views.py's
select/slice/unsqueeze views, advanced items (lists, arrays, tensors, masks) pick flat
positions that a copy (IndexBackward0) or an in-place write (setitem, at the foot) uses."""

from __future__ import annotations

import builtins
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtypes, messages
from .grad_mode import no_grad
from .ops import common
from .ops.basic import reductions, views
from .ops.basic.inplace import apply_inplace, copy_
from .ops.basic.view_making import flat_positions, make_view
from .ops.basic.views import ALIAS, select, slice, unsqueeze
from .tensor import Tensor


def _is_advanced(item: Any) -> bool:
    """An index that copies (IndexBackward0): a list, an array, a tensor other than a 0-d
    integer one (which torch takes as a plain integer)."""
    if isinstance(item, Tensor):
        return not (item.ndim == 0 and item.dtype.category == 1)
    return isinstance(item, list | np.ndarray)


def _as_items(index: Any) -> tuple[Any, ...] | None:
    """torch's treatSequenceAsTuple: a tuple, or (numpy's old heuristic) a short list holding
    a sequence, tensor, slice, None or Ellipsis, is a tuple of indices; None otherwise."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32 and any(
            isinstance(i, Tensor | list | tuple | builtins.slice) or i is None or i is Ellipsis
            for i in index):
        warnings.warn(messages.NON_TUPLE_SEQUENCE_INDEX, UserWarning, stacklevel=4)
        return tuple(index)
    return None


def index_array(item: Any) -> np.ndarray:
    return item._data if isinstance(item, Tensor) else np.asarray(item)


def advanced_positions(self: Tensor, index: Any) -> np.ndarray:
    """Flat positions picked by an advanced (tensor/list/mask) index, as numpy picks them."""
    if _dims_of(index) > self.ndim:
        raise IndexError(messages.too_many_indices(self.ndim))
    return picked_positions(self, (index_array(index),))


def picked_positions(t: Tensor, key: tuple[Any, ...]) -> np.ndarray:
    """Flat positions of t that numpy's key picks, after ATen's index checks (with its
    texts): mask shapes, index shapes that broadcast, indices in bounds."""
    dim, arrays = 0, []
    for item in key:
        if isinstance(item, np.ndarray) and item.dtype == np.bool_:
            for j in range(item.ndim):
                if dim + j >= t.ndim or item.shape[j] != t.shape[dim + j]:
                    raise IndexError(messages.mask_shape_mismatch(
                        messages.sizes(item.shape), j, messages.sizes(t.shape), dim + j))
            arrays.append((dim, item))
            dim += item.ndim
        elif isinstance(item, np.ndarray):
            arrays.append((dim, item))
            dim += 1
        else:
            dim += 1
    shapes = [a.shape for _, a in arrays if a.dtype != np.bool_]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(messages.index_shapes_mismatch(
            ", ".join(messages.sizes(s) for s in shapes))) from None
    k = 0  # ATen names the k-th index tensor's position, not the tensor's dim
    for d, a in arrays:
        if a.dtype == np.bool_:
            k += a.ndim  # a mask is expanded into one index tensor per dim (nonzero)
            continue
        if d < t.ndim:
            bad = a[(a < -t.shape[d]) | (a >= t.shape[d])]
            if bad.size:
                raise IndexError(messages.index_out_of_bounds(int(bad.reshape(-1)[0]), k,
                                                              t.shape[d]))
        k += 1
    return np.asarray(flat_positions(t)[key])


def _dims_of(item: Any) -> int:
    """How many dims of the indexed tensor an index item consumes."""
    if item is None or item is Ellipsis:
        return 0
    if _is_advanced(item):
        key = index_array(item)
        return key.ndim if key.dtype == np.bool_ else 1
    return 1


def _apply_basic(self: Tensor, items: tuple[Any, ...], lone: bool
                 ) -> tuple[Tensor, tuple[Any, ...] | None]:
    """torch's applySlicing: the basic items become select/slice/unsqueeze steps, one view
    node each (a full slice inside a tuple is skipped); the advanced items are returned as
    the numpy key that picks from that view (None when there are none), which numpy places
    as torch's index() does once the integers are gone."""
    if lone and self.ndim == 0:
        # torch's fast paths for a lone int (applySelect) and a lone slice check the 0-dim case
        if isinstance(items[0], builtins.slice):
            raise IndexError(messages.SLICE_OF_0_DIM)
        if type(items[0]) is int:
            raise IndexError(messages.INDEX_OF_0_DIM if items[0] == 0
                             else messages.index_out_of_range(items[0], 0, 0))
    consumed = builtins.sum(_dims_of(i) for i in items)
    if consumed > self.ndim:
        raise IndexError(messages.too_many_indices(self.ndim))
    out, dim = self, 0
    key: list[Any] = []
    advanced = False
    for position, item in enumerate(items):
        if item is None:
            out, dim = unsqueeze(out, dim), dim + 1
            key.append(builtins.slice(None))
        elif item is Ellipsis:
            n = self.ndim - consumed
            dim += n
            key.extend([builtins.slice(None)] * n)
        elif isinstance(item, builtins.slice):
            if item != builtins.slice(None) or lone:
                out = slice(out, dim, item.start, item.stop, item.step)
            dim += 1
            key.append(builtins.slice(None))
        elif _is_advanced(item):
            key.append(index_array(item))
            dim += _dims_of(item)
            advanced = True
        else:
            # applySelect's text names the item's position in the index (its real_dim, None
            # and ... counted), not the dim it selects from: t[None, 5] names dimension 1
            size = out.shape[dim]
            if not -size <= int(item) < size:
                raise IndexError(messages.index_out_of_range(int(item), position, size))
            out = select(out, dim, int(item))
    return out, (tuple(key) if advanced else None)


def bytes_as_masks(index: Any, values: Tensor | None = None, accumulate: bool = False
                   ) -> Any:
    """IndexingUtils.h expandTensors: a uint8 index tensor is a mask, with its deprecation
    warning (once per such tensor of the index). For a write (`values`), index_put_'s
    canDispatchToMaskedFill first sends a single CPU value with one uint8 or bool mask as the
    only index tensor to masked_fill_, which refuses a uint8 mask."""
    items = index if isinstance(index, tuple | list) else (index,)
    tensors = [i for i in items if _is_advanced(i)]
    if (values is not None and not accumulate and values._data.size == 1
            and values.device.type == "cpu" and len(tensors) == 1
            and isinstance(tensors[0], Tensor) and tensors[0].dtype is dtypes.uint8):
        raise RuntimeError(messages.masked_fill_mask_dtype(tensors[0].dtype.cpp_name))
    def as_mask(item: Any) -> Any:
        if isinstance(item, Tensor) and item.dtype is dtypes.uint8:
            warnings.warn(messages.UINT8_INDEX, UserWarning, stacklevel=5)
            return common.new(item._data != 0, dtypes.bool_, item.device)
        return item
    if not any(isinstance(i, Tensor) and i.dtype is dtypes.uint8 for i in items):
        return index   # unchanged, the same object
    if isinstance(index, tuple | list):
        return type(index)(as_mask(i) for i in index)
    return as_mask(index)


def getitem(self: Tensor, index: Any) -> Tensor:
    """Basic indexing decomposes into select/slice/unsqueeze steps, one node each, as in
    torch's python_variable_indexing; advanced items then make a copy (IndexBackward0) of
    that view."""
    index = bytes_as_masks(index)
    items = _as_items(index)
    if items is None and _is_advanced(index):
        return common.gather(self, advanced_positions(self, index), "IndexBackward0",
                             indices=[_index_tensor(index)])
    out, key = _apply_basic(self, (index,) if items is None else items, lone=items is None)
    if key is None:
        # ATen's get_item: an index that selects nothing (x[...], x[:, ...]) still returns a
        # new tensor, an alias view of self
        return make_view(self, lambda a: a[...], ALIAS) if out is self else out
    assert items is not None   # a lone advanced index took the first branch
    return common.gather(out, picked_positions(out, key), "IndexBackward0",
                         indices=[_index_tensor(i) for i in items if _is_advanced(i)])


def _index_tensor(item: Any) -> Tensor:
    """An advanced item as the tensor index.Tensor takes (and IndexBackward0 saves): a
    tensor as it is (a mask too: ATen expands it to its nonzero positions inside the
    kernel), a list or array as torch.tensor(...) makes it (int64, or bool)."""
    if isinstance(item, Tensor):
        return item
    arr = np.asarray(item)
    dt = dtypes.bool_ if arr.dtype == np.bool_ else dtypes.int64
    return common.new(arr, dt, dtypes.get_default_device())


def advanced_target(self: Tensor, index: Any, items: tuple[Any, ...] | None
                    ) -> tuple[Tensor, np.ndarray | None]:
    """For setitem: the tensor an index writes into (self, or the view its basic items
    make) and, for an advanced index, the flat positions in it (None for a basic index).
    `items`: _as_items(index), which warns, so the caller makes it once."""
    if items is None and _is_advanced(index):
        return self, advanced_positions(self, index)
    out, key = _apply_basic(self, (index,) if items is None else items, lone=items is None)
    return out, None if key is None else picked_positions(out, key)


# ---- __setitem__ -------------------------------------------------------------------------

def setitem(self: Tensor, index: Any, value: Any) -> None:
    """Basic index: copy_ into the view (CopySlices on the base). Advanced index: index_put_
    on the tensor, or on the view its basic items make (IndexPutBackward0, under a
    CopySlices for a view); the value's leading 1-dims are viewed away first, as
    THPVariable_setitem does (a ViewBackward0 under IndexPutBackward0)."""
    value_t = _value_tensor(self, value)
    index = bytes_as_masks(index, value_t)
    items = _as_items(index)
    target, positions = advanced_target(self, index, items)
    if positions is None:
        _copy_to(target, value_t)
        return
    value_t = _without_leading_ones(value_t)
    fill = index_put_values(target, (index,) if items is None else items, value_t, False)
    try:
        np.broadcast_shapes(tuple(value_t.shape), positions.shape)
    except ValueError:
        raise RuntimeError(messages.index_put_shape_mismatch(
            messages.sizes(value_t.shape), messages.sizes(positions.shape))) from None
    with no_grad():
        r = common.index_put(target, positions, fill)
    apply_inplace(target, common.INDEX_PUT, r, [value_t], index=positions)


def _value_tensor(self: Tensor, value: Any) -> Tensor:
    """THPVariable_setitem's valueToTensor: a tensor as it is; a Python number a 0-d tensor
    of self's dtype and device, made by checked_convert (dtypes.scalar_in: a complex number
    with an imaginary part into a real self is torch's overflow error, without one its real
    part, with no warning)."""
    if isinstance(value, Tensor) or not isinstance(value, numbers.Number):
        return common.wrap(value)
    v = dtypes.scalar_in(value, self.dtype)
    return common.new(np.asarray(v, dtype=self.dtype.np), self.dtype, self.device)


def index_put_values(self: Tensor, indices: Sequence[Any], values: Tensor,
                     accumulate: bool) -> Tensor:
    """_index_put_impl_'s rule for the values, as the kernel writes them into self: a single
    value on the CPU with one bool mask as the only index tensor is masked_fill_(mask,
    values.item()) (canDispatchToMaskedFill; the item made self's dtype by checked_convert,
    dtypes.scalar_in); any other values must be of self's dtype (make_index_put_iterator:
    no cast, a complex value into a real self included)."""
    tensors = [_index_tensor(i) for i in indices if _is_advanced(i)]
    if (not accumulate and values._data.size == 1 and values.device.type == "cpu"
            and len(tensors) == 1 and tensors[0].dtype is dtypes.bool_):
        v = dtypes.scalar_in(values._data.reshape(()).item(), self.dtype)
        return common.new(np.full(values.shape, v, dtype=self.dtype.np), self.dtype,
                          values.device)
    if values.dtype is not self.dtype:
        raise RuntimeError(messages.index_put_dtype(self.dtype.scalar_name,
                                                    values.dtype.scalar_name))
    return values


def _without_leading_ones(t: Tensor, always: bool = False) -> Tensor:
    """at::indexing::slicePrefix1sSize: a view without the leading size-1 dims. setitem's
    index_put_ path views only when there are some; copy_to views `always`."""
    sizes = list(t.shape)
    while sizes and sizes[0] == 1:
        sizes.pop(0)
    return t if len(sizes) == t.ndim and not always else views.view(t, tuple(sizes))


def _copy_to(dst: Tensor, src: Tensor) -> None:
    """torch's setitem copy (python_variable_indexing.cpp copy_to): equal shapes copy; a
    0-dim cpu value fills; otherwise the value's leading 1-dims are viewed away and it is
    expanded to the destination - which shows as ViewBackward0 / ExpandBackward0 nodes."""
    if tuple(dst.shape) == tuple(src.shape):
        copy_(dst, src)
        return
    if src.ndim == 0 and src.device.type == "cpu":
        copy_(dst, src)  # torch's fill_(Tensor): same values, same edges
        return
    src = _without_leading_ones(src, always=True)
    if tuple(src.shape) != tuple(dst.shape):
        common.broadcast_shape(tuple(dst.shape), tuple(src.shape))
        src = reductions.expand(src, tuple(dst.shape))
    copy_(dst, src)
