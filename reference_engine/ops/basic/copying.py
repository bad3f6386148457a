"""clone and contiguous: copies, CloneBackward0 (to, with dtype, device or memory format:
to_copy.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import dtypes, messages, tensor_metadata
from ...autograd_meta import OpSpec, linear_forward, record
from ...tensor import Tensor

# ---- copying, converting -------------------------------------------------------

CLONE = OpSpec("CloneBackward0", ("self",), jvp="auto_linear")


@linear_forward(CLONE)
def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    # preserve_format (the default) keeps a non-overlapping and dense tensor's strides
    fmt = dtypes.preserve_format if memory_format is None else memory_format
    return record(CLONE, Tensor(layout_copy(self._data, fmt), self.dtype, self.device), [self])


def in_format(self: Tensor, memory_format: Any = None) -> bool:
    """Tensor.is_contiguous(memory_format=...)."""
    return tensor_metadata.in_format(self._data, memory_format)


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """self when already laid out in memory_format (row-major by default), else a clone in
    it (CloneBackward0), as torch's contiguous."""
    fmt = memory_format or dtypes.contiguous_format
    return self if in_format(self, fmt) else clone(self, memory_format=fmt)


dense = tensor_metadata.dense   # (sorting and the layout contract read it here too)


def layout_copy(a: np.ndarray, fmt: Any) -> np.ndarray:
    """An array holding a's values in the layout of a copy in memory format fmt: preserve
    keeps a non-overlapping and dense layout (ATen's empty_strided with self's strides),
    any other layout becomes row-major; channels_last is row-major over (N, H, W, C)."""
    if fmt is dtypes.channels_last:
        if a.ndim != 4:
            raise RuntimeError(messages.CHANNELS_LAST_RANK)
        return np.moveaxis(np.array(np.moveaxis(a, 1, -1), order="C"), -1, 1)
    if fmt is dtypes.preserve_format and dense(a):
        if a.size == 0:   # empty_strided with a's strides (NumPy would allocate zero strides)
            return np.ndarray(a.shape, a.dtype, buffer=np.empty(0, a.dtype), strides=a.strides)
        return np.array(a, order="K")
    return np.array(a, order="C")   # (np.ascontiguousarray makes a 0-d array 1-d)


# They import this module; used at call time.
