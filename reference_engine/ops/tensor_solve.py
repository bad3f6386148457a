"""linalg.tensorinv and linalg.tensorsolve, as ATen composes them (LinearAlgebra.cpp): the
tensor reshaped to a square matrix, linalg.inv_ex (linalg.solve), the result reshaped back,
so their graphs are torch's views around LinalgInvExBackward0 (LinalgSolveExBackward0)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .. import messages
from ..tensor import Tensor
from . import linalg_ex, shape_views, solve
from .basic import views


def tensorinv(self: Tensor, ind: int = 2) -> Tensor:
    """torch.linalg.tensorinv: the inverse of A as a map from its last dims to its first ind
    (ATen's `self`, which its parser's texts call `input`)."""
    A = self
    if ind <= 0:
        raise RuntimeError(messages.tensorinv_ind(ind))
    end, start = list(A.shape[ind:]), list(A.shape[:ind])
    prod_end, prod_start = math.prod(end), math.prod(start)
    if prod_end != prod_start:
        raise RuntimeError(messages.tensorinv_shapes(prod_end, prod_start))
    result = linalg_ex.inv_ex(views.reshape(A, (prod_end, prod_end)))[0]
    return views.reshape(result, tuple(end + start))


def tensorsolve(self: Tensor, other: Tensor, dims: Sequence[int] | None = None) -> Tensor:
    """torch.linalg.tensorsolve: X with tensordot(A, X, X.ndim) = B (ATen's self and other)."""
    A, B = self, other
    ndim = A.ndim
    a = A
    if dims is not None:
        a = shape_views.movedim(a, list(dims), list(range(ndim - len(dims), ndim)))
    result_shape = list(a.shape[B.ndim:])
    result_product, other_product = math.prod(result_shape), math.prod(B.shape)
    if result_product != other_product:
        raise RuntimeError(messages.tensorsolve_shapes(result_product, other_product))
    a = views.reshape(a, (result_product, result_product))
    result = solve.linalg_solve(a, views.flatten(B))
    return views.reshape(result, tuple(result_shape))
