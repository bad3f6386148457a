"""linalg.matrix_norm and linalg.norm, as ATen composes them (LinearAlgebra.cpp
linalg_matrix_norm, linalg_norm): 'fro' is linalg.vector_norm over the two dims; ord 1 / inf
(-1 / -inf) the amax (amin) of the 1-norms of the columns (rows), so their graphs are torch's
AmaxBackward0 / AminBackward0 over LinalgVectorNormBackward0; ord 2 and -2 the amax (amin)
and 'nuc' the sum of the singular values (linalg.svdvals, ops/spectral.py) of A with the two
dims permuted to the end."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import messages
from ..dtypes import dtype as _dtype
from ..tensor import Tensor
from . import extremes, norms, spectral
from .basic import reductions, to_copy, views


def _checks(A: Tensor, dim: Sequence[int], dtype: _dtype | None) -> list[int]:
    """_linalg_matrix_norm_checks: A a (batch of) matrix, floating or complex, dim two
    different dims (wrapped)."""
    if A.ndim < 2:
        raise RuntimeError(messages.linalg_at_least_2d("linalg.matrix_norm"))
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(messages.linalg_not_floating("linalg.matrix_norm",
                                                        A.dtype.scalar_name))
    dims = list(dim)
    if len(dims) != 2:
        raise RuntimeError(messages.matrix_norm_dim_pair(dims))
    wrapped = [d + A.ndim if d < 0 else d for d in dims]
    for d in dims:
        if not -A.ndim <= d < A.ndim:
            raise IndexError(messages.dim_out_of_range(-A.ndim, A.ndim - 1, d))
    if wrapped[0] == wrapped[1]:
        raise RuntimeError(messages.matrix_norm_same_dims(*wrapped))
    return wrapped


def matrix_norm(self: Tensor, ord: Any = "fro", dim: Sequence[int] = (-2, -1),
                keepdim: bool = False, *, dtype: _dtype | None = None) -> Tensor:
    """torch.linalg.matrix_norm (ATen's `self`, which its parser's texts call `input`)."""
    A = self
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(messages.matrix_norm_order(ord))
        dims = _checks(A, dim, dtype)
        if ord == "nuc":
            return _of_singular_values(A, dims, keepdim, dtype,
                                       lambda s: reductions.sum(s, -1, keepdim))
        return norms.vector_norm(A, 2, dims, keepdim, dtype=dtype)
    p = float(ord)
    if abs(p) not in (1.0, 2.0, math.inf):
        raise RuntimeError(messages.matrix_norm_order(_number(ord)))
    dims = _checks(A, dim, dtype)
    if abs(p) == 2.0:
        extreme = extremes.amax if p > 0 else extremes.amin
        return _of_singular_values(A, dims, keepdim, dtype, lambda s: extreme(s, -1, keepdim))
    if math.isinf(p):   # the inf norm is the 1 norm of the transpose
        dims.reverse()
    if not keepdim and dims[0] < dims[1]:   # the first reduction removes a dim before it
        dims[1] -= 1
    column_norms = norms.vector_norm(A, 1.0, [dims[0]], keepdim, dtype=dtype)
    reduce = extremes.amax if p > 0 else extremes.amin
    return reduce(column_norms, dims[1], keepdim)


def _of_singular_values(A: Tensor, dims: list[int], keepdim: bool, dtype: _dtype | None,
                        reduce: Callable[[Tensor], Tensor]) -> Tensor:
    """ATen's ord 2, -2 and 'nuc': `reduce` of svdvals of A (cast to dtype) with dims moved
    to the end (create_dim_backshift_permutation), keepdim's dims put back by the reverse
    permutation."""
    if dtype is not None:
        A = to_copy.to(A, dtype)
    order = [d for d in range(A.ndim) if d not in dims] + dims
    result = reduce(spectral.linalg_svdvals(views.permute(A, order)))
    if keepdim:
        reverse = [order.index(d) for d in range(A.ndim)]
        result = views.permute(views.unsqueeze(result, -1), reverse)
    return result


def _number(ord: Any) -> str:
    """The order as ATen prints the double in its text: 3, 3.5."""
    value = float(ord)
    return str(int(value)) if value.is_integer() else repr(value)


def norm(self: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: _dtype | None = None) -> Tensor:
    """torch.linalg.norm: a matrix norm over two dims (or a 2-D input) when ord is given,
    else linalg.vector_norm (ord None: the 2-norm, which is also Frobenius)."""
    A = self
    dims = [dim] if isinstance(dim, int) else (None if dim is None else list(dim))
    if isinstance(ord, str):
        if dims is not None:
            if len(dims) not in (1, 2):
                raise RuntimeError(messages.linalg_norm_dim_length(dims))
        elif A.ndim not in (1, 2):
            raise RuntimeError(messages.linalg_norm_ndim(A.ndim))
        return matrix_norm(A, ord, dims if dims is not None else (0, 1), keepdim, dtype=dtype)
    if dims is not None:
        if len(dims) not in (1, 2):
            raise RuntimeError(messages.linalg_norm_dim_length(dims))
    elif ord is not None and A.ndim not in (1, 2):
        raise RuntimeError(messages.linalg_norm_ndim(A.ndim))
    if ord is not None and ((dims is not None and len(dims) == 2)
                            or (dims is None and A.ndim == 2)):
        return matrix_norm(A, ord, dims if dims is not None else (0, 1), keepdim, dtype=dtype)
    return norms.vector_norm(A, 2.0 if ord is None else ord, dims, keepdim, dtype=dtype)
