"""Contractions: inner and tensordot. Both are CompositeImplicitAutograd in ATen
(aten/src/ATen/native/Linear.cpp), so each is written here in the ops ATen calls, one for
one (sums of broadcast dims, permute, reshape, mm, reshape), and its graph names torch's
nodes."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from .. import messages
from ..tensor import Tensor
from .basic import elementwise as ops
from .basic import reductions, views
from .common import wrap_dim
from .linalg import dot, mm


def _tensordot(a: Tensor, b: Tensor, dims1: Sequence[int], dims2: Sequence[int]) -> Tensor:
    """ATen's tensordot: a contracted dim of size 1 on one side is summed away on the other
    first (broadcasting), then both are permuted (free dims first in a, last in b), reshaped
    to matrices, multiplied, and the product reshaped to the free dims; a full contraction
    (no free elements on either side) is a dot or a mul + sum instead."""
    if len(dims1) != len(dims2):
        raise RuntimeError(messages.TENSORDOT_DIM_LISTS)
    if a.dtype is not b.dtype:
        raise RuntimeError(messages.TENSORDOT_DTYPES)
    d1 = [wrap_dim(d, a.ndim) for d in dims1]
    d2 = [wrap_dim(d, b.ndim) for d in dims2]
    csize = 1
    t1, t2 = a, b
    for i, j in zip(d1, d2, strict=True):
        s1, s2 = a.shape[i], b.shape[j]
        if s2 == 1:
            t1 = reductions.sum(t1, i, True)
        elif s1 == 1:
            t2 = reductions.sum(t2, j, True)
        else:
            if s1 != s2:
                raise RuntimeError(messages.tensordot_sizes(s1, dims1[d1.index(i)], s2,
                                                            dims2[d2.index(j)]))
            csize *= s1
    free1 = [i for i in range(a.ndim) if i not in d1]
    free2 = [i for i in range(b.ndim) if i not in d2]
    size1 = size2 = 1
    for i in free1:
        size1 *= t1.shape[i]
    for i in free2:
        size2 *= t2.shape[i]
    rsizes = tuple(t1.shape[i] for i in free1) + tuple(t2.shape[i] for i in free2)
    p1, p2 = views.permute(t1, free1 + d1), views.permute(t2, d2 + free2)
    if size1 != 1 or size2 != 1:
        product = mm(views.reshape(p1, (size1, csize)), views.reshape(p2, (csize, size2)))
    elif p1.is_contiguous() and p2.is_contiguous():
        # a full contraction: dot of the flattened views
        product = dot(views.flatten(p1), views.flatten(p2))
    else:
        # ... or mul + sum, which spares the two contiguous() copies
        product = reductions.sum(ops.mul(views.squeeze(p1), views.squeeze(p2)))
    return views.reshape(product, rsizes)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """torch/functional.py's tensordot: `dims` an int (the last dims of a with the first of
    b) or two lists, then ATen's tensordot."""
    if out is not None:
        raise NotImplementedError(messages.TENSORDOT_OUT_NOT_MODELLED)
    if isinstance(dims, builtins.bool) or not isinstance(dims, (tuple, list, int)):
        raise RuntimeError(messages.tensordot_dims_type(dims))
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(messages.tensordot_dims_negative(dims))
        if dims > builtins.min(a.ndim, b.ndim):
            raise RuntimeError(messages.tensordot_dims_too_many(dims))
        return _tensordot(a, b, list(range(-dims, 0)), list(range(dims)))
    dims_a, dims_b = dims
    dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
    dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    return _tensordot(a, b, dims_a, dims_b)


def inner(self: Tensor, other: Tensor) -> Tensor:
    """ATen: self * other when either is 0-d, else tensordot over the last dims (whose sizes
    must agree: tensordot would broadcast a 1)."""
    if self.ndim == 0 or other.ndim == 0:
        return ops.mul(self, other)
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(messages.inner_last_dims(tuple(self.shape), tuple(other.shape)))
    return _tensordot(self, other, [-1], [-1])
