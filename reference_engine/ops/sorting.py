"""Sorting and order statistics: sort, msort, topk, kthvalue, median, nanmedian, mode.

Each picks elements, so its backward is value_selecting_reduction_backward (the grad
scattered to the picked indices: reductions.select_backward) and its jvp the tangent
gathered there; median and nanmedian without a dim spread the grad evenly over the elements
equal to the result (evenly_distribute_backward). Which element of equal ones is picked
follows ATen's CPU kernels, said at each op."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, extremes
from .basic import copying


def _named(name: str) -> type:
    """torch.return_types.<name>: a (values, indices) tuple with named fields."""
    return type(name, (extremes.return_types,), {})


sort_return_type = _named("sort")
topk_return_type = _named("topk")
kthvalue_return_type = _named("kthvalue")
median_return_type = _named("median")
nanmedian_return_type = _named("nanmedian")
mode_return_type = _named("mode")


def _selecting(name: str) -> OpSpec:
    """value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(),
    keepdim) and gather_with_keepdimed_indices(self_t, dim, indices, keepdim)."""
    return OpSpec(name, ("self",), {"self": ("indices",)},
                  lambda c, g: [extremes.select_backward(c, g)], jvp=extremes.select_jvp)


SORT = _selecting("SortBackward0")
SORT_STABLE = _selecting("SortBackward1")
TOPK = _selecting("TopkBackward0")
KTHVALUE = _selecting("KthvalueBackward0")
MEDIAN1 = _selecting("MedianBackward1")
NANMEDIAN1 = _selecting("NanmedianBackward1")
MODE = _selecting("ModeBackward0")
MEDIAN0 = OpSpec("MedianBackward0", ("self",), {"self": ("self", "result")},
                 lambda c, g: [extremes.evenly_distribute(c, g)],
                 jvp=lambda c: extremes.evenly_read_tangent(c.self, c.self_t, c.result, None,
                                                            False))
NANMEDIAN0 = OpSpec("NanmedianBackward0", ("self",), {"self": ("self", "result")},
                    lambda c, g: [extremes.evenly_distribute(c, g)],
                    jvp=lambda c: extremes.evenly_read_tangent(c.self, c.self_t, c.result, None,
                                                       False))


def lines_along(self: Tensor, dim: int) -> tuple[np.ndarray, int]:
    """self's data with dim moved last (a 0-d tensor as one 1-element line), and dim."""
    d = common.wrap_dim(dim, self.ndim)
    a = self._data.reshape(1) if self.ndim == 0 else np.moveaxis(self._data, d, -1)
    return a, d


def stable_order(a: np.ndarray, descending: bool) -> np.ndarray:
    """The stable order along the last dim, NaN counted larger than every number (ATen's
    sort comparators); equal values keep their order, as ATen's CPU sort (a stable sort
    whether or not stable=True is asked)."""
    if not descending or a.size == 0:
        return np.argsort(a, axis=-1, kind="stable")
    nan = np.isnan(a)
    key = np.where(nan, 0, -a)
    # lexsort is stable and sorts by its last key first: NaNs, then the rest descending
    flat_key, flat_nan = key.reshape(-1, a.shape[-1]), nan.reshape(-1, a.shape[-1])
    rows = [np.lexsort((k, ~n)) for k, n in zip(flat_key, flat_nan, strict=True)]
    return np.array(rows, np.int64).reshape(a.shape)


def _result(spec: OpSpec, kind: type, self: Tensor, values: np.ndarray, idx: np.ndarray,
            d: int, keepdim: bool, moved: bool = True, order: str = "C") -> Any:
    """The (values, indices) pair from line results (dim last when `moved`), in memory
    order `order` (numpy's: "K" keeps the arrays' own layout)."""
    if self.ndim == 0:
        values, idx = values.reshape(()), idx.reshape(())
    elif moved:
        values, idx = np.moveaxis(values, -1, d), np.moveaxis(idx, -1, d)
    indices = common.new(idx.astype(np.int64), dtypes.int64, self.device, order)
    out = record(spec, common.new(values, self.dtype, self.device, order), [self], dim=d,
                 keepdim=keepdim, indices=indices, self_sym_sizes=tuple(self.shape))
    return kind((out, indices))


# ---- sort / msort -------------------------------------------------------------------------

def sort(self: Tensor, dim: int = -1, descending: bool = False, stable: bool | None = None
         ) -> Any:
    """sort(self, dim, descending), or sort.stable (SortBackward1) when stable= is given."""
    a, d = lines_along(self, dim)
    idx = stable_order(a, descending)
    spec = SORT if stable is None else SORT_STABLE
    values, indices = np.take_along_axis(a, idx, -1), idx
    if self.ndim and copying.dense(self._data):
        # sort's outputs are empty_like(self): a non-overlapping and dense self's layout
        values, indices = (_laid_out_like(self._data, np.moveaxis(x, -1, d))
                           for x in (values, indices))
        return _result(spec, sort_return_type, self, values, indices, d, True, moved=False,
                       order="K")
    return _result(spec, sort_return_type, self, values, indices, d, True)


def _laid_out_like(like: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = np.empty_like(like, dtype=x.dtype, order="K")
    out[...] = x
    return out


def msort(self: Tensor) -> Tensor:
    """sort(self, 0).values: its grad_fn is SortBackward0."""
    return sort(self, 0)[0]


# ---- topk ---------------------------------------------------------------------------------

def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
         ) -> Any:
    a, d = lines_along(self, dim)
    n = a.shape[-1]
    if not 0 <= k <= n:
        raise RuntimeError(messages.TOPK_OUT_OF_RANGE)
    idx = stable_order(a, largest)[..., :k]
    return _result(TOPK, topk_return_type, self, np.take_along_axis(a, idx, -1), idx, d, True)


# ---- kthvalue / median / nanmedian / mode: one value per line -----------------------------

def _nonempty(self: Tensor, d: int, spec: OpSpec) -> None:
    """zero_numel_check_dims: a reduced dim of size 0 has no value to pick."""
    if self.ndim and self.shape[d] == 0:
        # nanmedian's kernel is median's, and so is its message
        op = {"KthvalueBackward0": "kthvalue", "ModeBackward0": "mode"}.get(spec.grad_fn,
                                                                           "median")
        raise IndexError(messages.reduction_dim_empty(op + "()", d))


def _pick(self: Tensor, dim: int, keepdim: bool, spec: OpSpec, kind: type,
          choose: Any) -> Any:
    """choose(line) -> (value, index) for each line along dim."""
    a, d = lines_along(self, dim)
    _nonempty(self, d, spec)
    flat = a.reshape(-1, a.shape[-1])
    picked = [choose(line) for line in flat]
    shape = a.shape[:-1]
    values = np.array([v for v, _ in picked], self._data.dtype).reshape(shape)
    idx = np.array([i for _, i in picked], np.int64).reshape(shape)
    if keepdim and self.ndim:
        values, idx = np.expand_dims(values, d), np.expand_dims(idx, d)
    return _result(spec, kind, self, values, idx, d, keepdim, moved=False)


def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False, *,
             out: tuple[Tensor, Tensor] | None = None) -> Any:
    """The k-th smallest (NaN largest); of equal values, the one torch's quickselect leaves
    at position k - 1 (not the k-th in the stable order)."""
    if out is not None:
        # kthvalue_out's at::assert_no_overlap(values, self) comes first; writing the
        # pair of outputs is not modelled
        if any(np.shares_memory(o._data, self._data) for o in out):
            raise RuntimeError(messages.PARTIAL_OVERLAP)
        raise NotImplementedError(messages.KTHVALUE_OUT_NOT_MODELLED)
    a, d = lines_along(self, dim)
    _nonempty(self, d, KTHVALUE)
    if not 1 <= k <= a.shape[-1]:
        raise RuntimeError(messages.kthvalue_out_of_range(d))

    def choose(line: np.ndarray) -> tuple[Any, int]:
        i = _quick_select(line.tolist(), k - 1)
        return line[i], i
    return _pick(self, dim, keepdim, KTHVALUE, kthvalue_return_type, choose)


def _gt_or_nan(x: Any, y: Any) -> bool:
    return (x != x and y == y) or x > y


def _quick_select(values: list[Any], k: int) -> int:
    """Sorting.cpp's quick_select_template for kthvalue (Sedgewick's partition, median of
    three pivot, NaN largest), step by step: the original index it leaves at position k.
    Which of equal values that is follows from its swaps, so only a port gives torch's
    index (kthvalue([1., 1., 1.], 2) is index 0, k = 1 is index 1)."""
    arr, idx = list(values), list(range(len(values)))

    def swap(i: int, j: int) -> None:
        arr[i], arr[j] = arr[j], arr[i]
        idx[i], idx[j] = idx[j], idx[i]
    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if _gt_or_nan(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap((lo + hi) >> 1, lo + 1)
        if _gt_or_nan(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if _gt_or_nan(arr[lo], arr[hi]):
            swap(lo, hi)
        if _gt_or_nan(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, piv = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while _gt_or_nan(piv, arr[i]):
                i += 1
            j -= 1
            while _gt_or_nan(arr[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


def _lower_median(line: np.ndarray, ignore_nan: bool) -> tuple[Any, int]:
    """The lower median ((n - 1) // 2 in sorted order). median: a line with a NaN has the
    first NaN as its median; nanmedian: the NaNs are left out (all NaN: the NaN that
    std::nth_element leaves first, _all_nan_pick)."""
    nan = np.isnan(line)
    if nan.any() and not ignore_nan:
        i = int(np.argmax(nan))
        return line[i], i
    if nan.all():
        i = _all_nan_pick(len(line))
        return line[i], i
    order = np.argsort(line, kind="stable")
    i = int(order[(int((~nan).sum()) - 1) // 2])
    return line[i], i


def _all_nan_pick(n: int) -> int:
    """The index nanmedian gives a line of n NaNs: ATen's median_with_indices_impl calls
    std::nth_element(first, first + 0, last) with a comparator false for NaNs, and
    libstdc++'s introselect then moves the middle of the range to its front and partitions
    (every element "equal"), until 3 are left, which insertion sort leaves in place."""
    idx, first, last = list(range(n)), 0, n
    while last - first > 3:
        mid = first + (last - first) // 2
        idx[first], idx[mid] = idx[mid], idx[first]
        lo, hi = first + 1, last
        while True:   # __unguarded_partition: swap pairs from both ends
            hi -= 1
            if not lo < hi:
                break
            idx[lo], idx[hi] = idx[hi], idx[lo]
            lo += 1
        last = lo      # the cut lies after position 0, the one wanted
    return idx[first]


def _median_all(self: Tensor, spec: OpSpec, ignore_nan: bool) -> Tensor:
    if self.numel() == 0:
        value = np.array(np.nan, self._data.dtype)
    else:
        value = np.asarray(_lower_median(self._data.reshape(-1), ignore_nan)[0])
    return record(spec, common.new(value, self.dtype, self.device), [self])


def median(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    if dim is None:
        return _median_all(self, MEDIAN0, False)
    return _pick(self, dim, keepdim, MEDIAN1, median_return_type,
                 lambda line: _lower_median(line, False))


def nanmedian(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    if dim is None:
        return _median_all(self, NANMEDIAN0, True)
    return _pick(self, dim, keepdim, NANMEDIAN1, nanmedian_return_type,
                 lambda line: _lower_median(line, True))


def _mode_line(line: np.ndarray) -> tuple[Any, int]:
    """The most frequent value (of equally frequent ones, the smallest) and the index of
    its last occurrence. The value is read at that index, as ATen's mode_kernel reads the
    last element of the value's run in its sorted pairs: of 0.0 and -0.0, which compare
    equal, it gives the later one's sign (np.unique would give the first's)."""
    values, counts = np.unique(line, return_counts=True)
    i = int(np.flatnonzero(line == values[int(np.argmax(counts))])[-1])
    return line[i], i


def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    return _pick(self, dim, keepdim, MODE, mode_return_type, _mode_line)
