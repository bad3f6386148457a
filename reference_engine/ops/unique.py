"""unique and unique_consecutive, with the ATen ops under them (_unique, _unique2, unique_dim,
unique_consecutive) that torch.unique and torch.unique_consecutive (torch/functional.py)
call and pick their results from.

The first output is differentiable in name only: derivatives.yaml writes each of these ops'
derivative as not_implemented("<op>"), so a floating input that requires grad gets a node
(UniqueBackward0, Unique2Backward0, UniqueDimBackward0, UniqueConsecutiveBackward0) whose
backward raises, and forward mode raises for a dual input; the inverse indices and counts
are integers and never require grad (test_integer_outputs).

ATen's CPU kernels give the unique values sorted whether or not sorted=True is asked (the
engine does alike), elements told apart by `!=` (so every NaN is its own value); an inverse
or counts not asked for is an empty int64 tensor, but unique_dim computes both always."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common


def _not_implemented(grad_fn: str, op: str) -> OpSpec:
    def backward(c: Any, g: Tensor) -> list[Tensor | None]:
        raise NotImplementedError(messages.derivative_not_implemented(op))
    return OpSpec(grad_fn, ("self",), {}, backward, jvp=common.no_jvp(op))


UNIQUE = _not_implemented("UniqueBackward0", "_unique")
UNIQUE2 = _not_implemented("Unique2Backward0", "_unique2")
UNIQUE_DIM = _not_implemented("UniqueDimBackward0", "unique_dim")
UNIQUE_CONSECUTIVE = _not_implemented("UniqueConsecutiveBackward0", "unique_consecutive")


def _groups(keys: np.ndarray) -> np.ndarray:
    """For rows `keys` (n, k) in order, True where a row differs from the one before (the
    first row always): ATen compares with `!=`, so NaNs never match."""
    new = np.ones(keys.shape[0], dtype=bool)
    if keys.shape[0] > 1:
        new[1:] = (keys[1:] != keys[:-1]).any(axis=1)
    return new


def _ints(a: np.ndarray, self: Tensor) -> Tensor:
    return common.new(np.asarray(a, dtype=np.int64), dtypes.int64, self.device)


def _empty(self: Tensor) -> Tensor:
    return _ints(np.zeros(0), self)


def _along(self: Tensor, dim: int | None, ordered: bool
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The unique values (sorted first unless `ordered`, i.e. consecutive runs), the inverse
    and the counts: of the flattened tensor (dim None), or of its slices along dim."""
    if dim is None:
        rows = self._data.reshape(-1, 1)
    else:
        d = common.wrap_dim(dim, self.ndim)
        moved = np.moveaxis(self._data, d, 0)
        rows = moved.reshape(moved.shape[0], -1)
    if ordered:
        order = np.arange(rows.shape[0])
    else:   # lexicographic and stable: np.lexsort sorts by its last key first
        order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(rows.shape[0])
    new = _groups(rows[order])
    inverse = np.empty(rows.shape[0], dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, rows.shape[0]))
    picked = order[starts]
    if dim is None:
        return self._data.reshape(-1)[picked], inverse.reshape(self.shape), inverse, counts
    values = np.moveaxis(np.take(moved, picked, axis=0), 0, d)
    return values, inverse, inverse, counts


def _output(spec: OpSpec, self: Tensor, values: np.ndarray) -> Tensor:
    return record(spec, common.new(values, self.dtype, self.device), [self])


def _unique2(self: Tensor, sorted: bool = True, return_inverse: bool = False,
             return_counts: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    values, inverse, _, counts = _along(self, None, False)
    return (_output(UNIQUE2, self, values),
            _ints(inverse, self) if return_inverse else _empty(self),
            _ints(counts, self) if return_counts else _empty(self))


def _unique(self: Tensor, sorted: bool = True, return_inverse: bool = False
            ) -> tuple[Tensor, Tensor]:
    values, inverse, _, _ = _along(self, None, False)
    return (_output(UNIQUE, self, values),
            _ints(inverse, self) if return_inverse else _empty(self))


def unique_dim(self: Tensor, dim: int, sorted: bool = True, return_inverse: bool = False,
               return_counts: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    values, _, inverse, counts = _along(self, dim, False)
    return _output(UNIQUE_DIM, self, values), _ints(inverse, self), _ints(counts, self)


def vf_unique_consecutive(self: Tensor, return_inverse: bool = False,
                          return_counts: bool = False, dim: int | None = None
                          ) -> tuple[Tensor, Tensor, Tensor]:
    """torch._VF.unique_consecutive (ATen's unique_consecutive, which calls
    unique_dim_consecutive for a dim: the node is UniqueConsecutiveBackward0 either way)."""
    values, inverse, _, counts = _along(self, dim, True)
    return (_output(UNIQUE_CONSECUTIVE, self, values),
            _ints(inverse, self) if return_inverse else _empty(self),
            _ints(counts, self) if return_counts else _empty(self))


def _pick(output: Tensor, inverse: Tensor, counts: Tensor, return_inverse: bool,
          return_counts: bool) -> Any:
    """torch/functional.py's choice of results: the output alone, or a tuple."""
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


def unique(self: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None) -> Any:
    if dim is None:
        out = _unique2(self, sorted, return_inverse, return_counts)
    else:
        out = unique_dim(self, dim, sorted, return_inverse, return_counts)
    return _pick(*out, return_inverse, return_counts)


def unique_consecutive(self: Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim: int | None = None) -> Any:
    out = vf_unique_consecutive(self, return_inverse, return_counts, dim)
    return _pick(*out, return_inverse, return_counts)
