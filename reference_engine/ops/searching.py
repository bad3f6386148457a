"""Searching and counting: argsort, searchsorted, bucketize, count_nonzero.

Their results are integer indices or counts, so none of them is differentiable: torch
records no node for them, whether or not an input requires grad (test_integer_outputs).
Which of equal elements comes first follows ATen's CPU kernels, said at each op."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from . import common, sorting


def argsort(self: Tensor, dim: int = -1, descending: bool = False, stable: bool = False
            ) -> Tensor:
    """sort(self, dim, descending).indices: ATen's CPU sort is stable whether or not
    stable=True is asked, so equal elements keep their order either way."""
    a, d = sorting.lines_along(self, dim)
    idx = sorting.stable_order(a, descending)
    idx = idx.reshape(()) if self.ndim == 0 else np.moveaxis(idx, -1, d)
    return common.new(idx.astype(np.int64), dtypes.int64, self.device)


def _search(boundaries: np.ndarray, values: np.ndarray, right: bool) -> np.ndarray:
    """Per line of `boundaries` (its last dim; a 1-d one serves every value), the index
    of each value's insertion point: after equal boundaries when `right`. A NaN value goes
    past every boundary (ATen's binary search compares with >= / >, false for NaN)."""
    side: Literal["left", "right"] = "right" if right else "left"
    if boundaries.ndim == 1:
        return np.searchsorted(boundaries, values, side=side)
    lines_b = boundaries.reshape(-1, boundaries.shape[-1])
    lines_v = values.reshape(lines_b.shape[0], -1)
    out = [np.searchsorted(b, v, side=side) for b, v in zip(lines_b, lines_v, strict=True)]
    return np.array(out).reshape(values.shape)


def _values(input: Any, like: Tensor) -> tuple[np.ndarray, Any]:
    """The values searched for (a Python number as a 0-d array), and their device."""
    if isinstance(input, Tensor):
        return input._data, input.device
    # searchsorted.Scalar: a Python number
    return np.asarray(input, dtype=like._data.dtype), like.device


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None,
                 sorter: Tensor | None = None) -> Tensor:
    """The insertion points of `input` in each line of `sorted_sequence` (int64, or int32
    with out_int32); side="right" is right=True. `sorter` orders an unsorted sequence."""
    seq = sorted_sequence._data
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter._data, -1)
    values, device = _values(input, sorted_sequence)
    idx = _search(seq, values, right or side == "right")
    dt = dtypes.int32 if out_int32 else dtypes.int64
    return common.new(np.asarray(idx).astype(dt.np), dt, device)


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """searchsorted of `input` in the 1-d `boundaries`."""
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def count_nonzero(self: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """The number of nonzero elements, over every dim or the given ones (int64)."""
    if dim is None:
        axes: tuple[int, ...] | None = None
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        axes = tuple(common.wrap_dim(d, self.ndim) for d in dims)
    data = self._data.reshape(1) if self.ndim == 0 and axes else self._data
    counts = np.count_nonzero(data, axis=axes)
    return common.new(np.asarray(counts, dtype=np.int64).reshape(
        np.shape(counts) if self.ndim else ()), dtypes.int64, self.device)
