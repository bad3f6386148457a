"""The layout a tangent shares with its primal (forward_ad.py's set_fw_grad rule): torch's
has_same_meta (autograd_meta.cpp) and the zeros of _new_zeros_with_same_feature_meta, read
from a tensor's storage (its size and t's offset in it, in t's elements).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .tensor import Tensor
from .tensor_storage import storage_root


def storage_numel(t: Tensor) -> int:
    """The storage's size in t's elements (a real view of a complex tensor counts its
    parts: at::_has_same_storage_numel divides the storage's bytes by t's itemsize). The
    storage, not the autograd base: a detached slice has none, yet its storage is whole."""
    return storage_root(t._data).nbytes // t._data.itemsize


def storage_offset(t: Tensor) -> int:
    """Where t starts in its storage, in t's elements."""
    a = t._data
    return (a.__array_interface__["data"][0]
            - storage_root(a).__array_interface__["data"][0]) // a.itemsize


def same_layout(a: Tensor, b: Tensor) -> bool:
    """torch's has_same_meta: storage offset, sizes, strides (but a dim of size 1's, which
    reads no other element), storage size. A ZeroTensor (a formula's result made of missing
    tangents alone) has no storage: never the same, so set_fw_grad copies it."""
    if a._zerotensor or b._zerotensor:
        return False
    if a.shape != b.shape or any(
            sa != sb and n != 1 for sa, sb, n in zip(a.stride(), b.stride(), a.shape,
                                                    strict=True)):
        return False
    # the conj and neg bits are part of the layout (a tangent whose bits differ is copied)
    return storage_offset(a) == storage_offset(b) \
        and storage_numel(a) == storage_numel(b) \
        and (a._is_conj, a._is_neg) == (b._is_conj, b._is_neg)


def zeros_with_layout_of(primal: Tensor, np_dtype: Any) -> np.ndarray:
    """Zeros laid out as `primal` in a storage of its storage's size (in elements); a layout
    NumPy gives with negative strides (none in torch) gets primal's shape, in order."""
    a = primal._data
    if a.size == 0 or any(st < 0 for st in a.strides):
        return np.zeros_like(a, dtype=np_dtype, order="K")
    offset = storage_offset(primal)
    storage = np.zeros(storage_numel(primal), dtype=np_dtype)
    # made on the storage's buffer, so that the storage is its root (Tensor.storage())
    return np.ndarray(a.shape, storage.dtype, buffer=storage, offset=offset * storage.itemsize,
                      strides=tuple(st // a.itemsize * storage.itemsize for st in a.strides))
