"""`Tensor.storage()`: the TypedStorage a tensor's elements live in, as far as autograd
tests read it: its length in the tensor's elements and the address it starts at, which two
tensors share when one aliases the other (make_dual, unpack_dual, views).

The engine's storage is the NumPy array at the root of a tensor's `.base` chain: views and
aliases are NumPy views of it, so what torch shares the engine shares too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import messages

if TYPE_CHECKING:
    from .dtypes import dtype as DType
    from .tensor import Tensor

# torch/storage.py _warn_typed_storage_removal: the first TypedStorage call of a process
# warns, later ones do not (set_warn_always does not change it: a flag of its own)
_warned = {"typed_storage": False}


def _warn_removal() -> None:
    import warnings
    if not _warned["typed_storage"]:
        _warned["typed_storage"] = True
        warnings.warn(messages.TYPED_STORAGE_DEPRECATED, UserWarning, stacklevel=3)


def storage_root(a: np.ndarray) -> np.ndarray:
    """The array a tensor's memory belongs to (its storage): the root of NumPy's views."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class TypedStorage:
    """A tensor's storage seen with its dtype (torch.storage.TypedStorage)."""

    def __init__(self, data: np.ndarray, dtype: DType) -> None:
        self._root = storage_root(data)
        self.dtype = dtype

    def __len__(self) -> int:
        _warn_removal()
        # TypedStorage._size: the storage's bytes over the dtype's element size
        return self._root.nbytes // self.dtype.itemsize

    def size(self) -> int:
        return len(self)

    def data_ptr(self) -> int:
        _warn_removal()
        return int(self._root.__array_interface__["data"][0])


def storage(self: Tensor) -> TypedStorage:
    _warn_removal()
    return TypedStorage(self._data, self.dtype)
